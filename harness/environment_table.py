"""The built-in table of environment failures: messages that say the machine, not the kernel, stopped the run.

Plain data, one dict per pattern, in the same fields a user's file gives (`--nan-env-patterns FILE`, TOML
`[[pattern]]` entries; harness.environment_failures reads both): `name`, `regex` (searched, Python syntax),
`backends` (where it applies: cuda, npu, cpu; empty: every backend), `kind` (device, memory, driver, package),
`startup_only` (true: only before any test runs; see below) and `example`, a real message it must match
(tests/harness/test_environment_failures.py checks every example against its own regex and every regex against
ordinary kernel failures).

`startup_only` entries never turn a test's failure into `environment`: an out-of-memory, a missing package or one of
the runtime's catch-all codes seen inside a test may be the kernel's doing (a leak, an oversized launch), so there it
stays the test's verdict. Where the facts come from is said beside each entry, in our words.
"""
from __future__ import annotations

from typing import Any

TABLE: tuple[dict[str, Any], ...] = (
    # --- the harness's own words --------------------------------------------------------------------------------
    {"name": "device-not-available", "kind": "device", "backends": [], "startup_only": True,
     # harness.backends.resolve: an explicit --device whose runtime sees no card
     "regex": r"--device (cuda|npu): .* is not available here",
     "example": "--device cuda: NVIDIA GPU (Triton) is not available here (torch sees no device)"},
    # --- CUDA ---------------------------------------------------------------------------------------------------
    {"name": "cuda-out-of-memory", "kind": "memory", "backends": ["cuda"], "startup_only": True,
     # torch's caching allocator says "CUDA out of memory. Tried to allocate"; the runtime's own code reads
     # "CUDA error: out of memory" (e.g. when a context is created on a full card)
     "regex": r"CUDA out of memory\. Tried to allocate|CUDA error: out of memory",
     "example": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 79.19 GiB total "
                "capacity; 70.02 GiB already allocated; 8.50 GiB free)"},
    {"name": "cuda-no-device", "kind": "device", "backends": ["cuda"], "startup_only": False,
     # cudaErrorNoDevice's text: the driver is there, no card is (or CUDA_VISIBLE_DEVICES hides them all)
     "regex": r"no CUDA-capable device is detected",
     "example": "RuntimeError: CUDA error: no CUDA-capable device is detected"},
    {"name": "cuda-device-busy", "kind": "device", "backends": ["cuda"], "startup_only": False,
     # cudaErrorDevicesUnavailable: the card is in exclusive-process mode and another process holds it
     "regex": r"CUDA-capable device\(s\) is/are busy or unavailable|cudaErrorDevicesUnavailable",
     "example": "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"},
    {"name": "cuda-driver-too-old", "kind": "driver", "backends": ["cuda"], "startup_only": False,
     # cudaErrorInsufficientDriver, and torch's own check of the driver against the CUDA it was built with
     "regex": r"CUDA driver version is insufficient for CUDA runtime version|The NVIDIA driver on your system is "
              r"too old",
     "example": "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"},
    {"name": "cuda-driver-init", "kind": "driver", "backends": ["cuda"], "startup_only": False,
     # the driver cannot start (no kernel module loaded, a container without the device nodes)
     "regex": r"Found no NVIDIA driver on your system|CUDA driver initialization failed|cudaErrorInitializationError",
     "example": "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
                "installed a driver"},
    {"name": "cuda-ecc", "kind": "device", "backends": ["cuda"], "startup_only": False,
     # cudaErrorECCUncorrectable: the card's memory is failing; no kernel writes that
     "regex": r"uncorrectable ECC error encountered",
     "example": "RuntimeError: CUDA error: uncorrectable ECC error encountered"},
    {"name": "nccl-init", "kind": "driver", "backends": ["cuda"], "startup_only": True,
     # a --kernel-setup that starts torch.distributed (vLLM's parallel state): NCCL fails to bring its ranks up
     "regex": r"NCCL error in: .*(unhandled system error|unhandled cuda error|internal error)",
     "example": "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
                "version 2.20.5"},
    {"name": "torch-cuda-library-mismatch", "kind": "package", "backends": ["cuda"], "startup_only": True,
     # torch's CUDA library built against another NCCL than the one installed (pytorch/pytorch#176829)
     "regex": r"libtorch_cuda\.so: undefined symbol",
     "example": "ImportError: /usr/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
                "ncclAlltoAll"},
    # --- Ascend NPU (CANN runtime, torch_npu) -------------------------------------------------------------------
    {"name": "npu-out-of-memory", "kind": "memory", "backends": ["npu"], "startup_only": True,
     # torch_npu's allocator words it like torch's CUDA one, "NPU out of memory. Tried to allocate ..." (seen in
     # vllm-ascend#19 and sglang#29838 as torch.OutOfMemoryError)
     "regex": r"NPU out of memory\. Tried to allocate",
     "example": "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total "
                "capacity; 56.05 GiB already allocated; 5.04 MiB free)"},
    {"name": "npu-memory-allocation-failure", "kind": "memory", "backends": ["npu"], "startup_only": True,
     # CANN's EL0004 "Memory_Allocation_Failure": the runtime could not get device memory, e.g. while setting the
     # device up (its memory pool), as a PTOAS board log shows (hw-native-sys/PTOAS#341)
     "regex": r"Memory_Allocation_Failure\(EL0004\)|EL0004: .*Failed to allocate memory",
     "example": "[ERROR] RecentErrMsg: 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to "
                "allocate memory."},
    {"name": "npu-set-device-failed", "kind": "device", "backends": ["npu"], "startup_only": False,
     # torch_npu's set_device ends in c10_npu::SetDevice; its failure carries the ACL code (507033, "device retain
     # error", in vllm-ascend#1558 and #4284); acl's own samples print "open device N failed, runtime result = ..."
     "regex": r"c10_npu::SetDevice\(device_id_\), error code is \d+|aclrtSetDevice\S* failed|"
              r"open device \d+ failed, runtime result = \d+|acl set device \d+ failed",
     "example": "RuntimeError: Initialize:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:146 NPU function error: "
                "c10_npu::SetDevice(device_id_), error code is 507033"},
    {"name": "npu-device-occupied", "kind": "device", "backends": ["npu"], "startup_only": False,
     # the ACL runtime's error-code name for a card another process holds exclusively (not seen in a trace here;
     # its name cannot be part of a kernel's message by accident)
     "regex": r"ACL_ERROR_RT_DEVICE_OCCUPIED",
     "example": "RuntimeError: aclrtSetDevice returned ACL_ERROR_RT_DEVICE_OCCUPIED (507016)"},
    {"name": "npu-visible-devices", "kind": "device", "backends": ["npu"], "startup_only": False,
     # ASCEND_RT_VISIBLE_DEVICES names a card the node does not have (gpustack#3352)
     "regex": r"set ASCEND_RT_VISIBLE_DEVICES:\[[^\]]*\] error",
     "example": "GetVisibleDevices:[INIT][DEFAULT]set ASCEND_RT_VISIBLE_DEVICES:[4] error, input data rang[0-2)"},
    {"name": "npu-driver-init", "kind": "driver", "backends": ["npu"], "startup_only": False,
     # the driver's management library cannot start in the container (a vNPU without its device files:
     # Project-HAMi/ascend-device-plugin#66)
     "regex": r"[Dd]rvMngGetConsoleLogLevel failed|dcmi module initialize failed",
     "example": "DrvMngGetConsoleLogLevel failed. (ret=4) dcmi module initialize failed. ret is -8005"},
    {"name": "npu-device-absent", "kind": "device", "backends": ["npu"], "startup_only": True,
     # EL0001 "Device_Absent/Abnormal": the card is gone or broken; mid-run it follows a lost heartbeat, which a
     # hanging kernel can cause, so only before the tests (vllm-ascend#8186)
     "regex": r"Device_Absent/Abnormal\(EL0001\)",
     "example": "[PID: 379] 2026-05-01-10:59:07.429.194 Device_Absent/Abnormal(EL0001): Device not found or invalid."},
    {"name": "npu-acl-call-failed", "kind": "driver", "backends": ["npu"], "startup_only": True,
     # torch_npu's catch-all line under any failed ACL call (ERR00100), also under a kernel's own fault: only
     # before the tests, and a fault marker (EZ9999, aicore exception) always wins (harness.environment_failures)
     "regex": r"ERR00100 PTA call acl api failed",
     "example": "[ERROR] 2025-07-01-08:38:50 (PID:114020, Device:-1, RankID:1) ERR00100 PTA call acl api failed"},
    {"name": "npu-inner-error", "kind": "driver", "backends": ["npu"], "startup_only": True,
     # CANN's EE9999 "Inner Error" (E*: runtime, not the operator's EZ9999): only before the tests
     "regex": r"\bEE9999\b",
     "example": "EE9999: Inner Error!\n        rtSetDevice execution failed, reason=[driver error:internal error]"},
    {"name": "npu-context-empty", "kind": "driver", "backends": ["npu"], "startup_only": True,
     # ACL 107002: no context on this thread; torch_npu hits it when the device never came up (vllm-ascend#800)
     "regex": r"aclrtGetCurrentContext\(.*\), error code is 107002",
     "example": "RuntimeError: GetDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:60 NPU function error: "
                "aclrtGetCurrentContext(&used_devices[local_device]), error code is 107002"},
    {"name": "torch-npu-library-mismatch", "kind": "package", "backends": ["npu"], "startup_only": True,
     # torch_npu built for another torch (an ABI mismatch: Ascend/pytorch#35, sglang#28628) or another CANN
     "regex": r"libtorch_npu\.so: undefined symbol",
     "example": "ImportError: /usr/local/lib/python3.11/site-packages/torch_npu/lib/libtorch_npu.so: undefined "
                "symbol: _ZNK3c1010TensorImpl20is_contiguous_customENS_12MemoryFormatE"},
    # --- packages -----------------------------------------------------------------------------------------------
    {"name": "runtime-package-missing", "kind": "package", "backends": [], "startup_only": True,
     # a backend's runtime (torch, torch_npu, triton or triton-ascend, which installs as triton, CANN's acl/tbe)
     # is not installed; a missing --kernel module itself stays a usage error
     "regex": r"No module named '(torch|torch_npu|triton|acl|tbe)(\.[\w.]+)?'",
     "example": "ModuleNotFoundError: No module named 'torch_npu'"},
    {"name": "triton-version-mismatch", "kind": "package", "backends": [], "startup_only": True,
     # the kernel's Triton API is not in the installed Triton (a newer upstream name on triton-ascend)
     "regex": r"cannot import name '\w+' from 'triton(\.[\w.]+)?'",
     "example": "ImportError: cannot import name 'libdevice' from 'triton.language.extra' "
                "(/usr/lib/python3/site-packages/triton/language/extra/__init__.py)"},
    {"name": "numpy-abi-mismatch", "kind": "package", "backends": [], "startup_only": True,
     # numpy's own message for an extension compiled against numpy 1.x imported under numpy 2
     "regex": r"compiled using NumPy 1\.x cannot be run in\s+NumPy 2",
     "example": "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0 as it may crash."},
)
