"""Device time of whole-row kernel variants at decode shapes (<= 16 rows, 128k-262k vocab), against the anchor.

    NAN_BENCH_OUT=out python -m bench.decode_sweep      (CUDA only; writes decode_sweep.json there)

The one-off sweep behind the word-pair plan (docs/bench.md, docs/decode-sweep-h200.json): one program per row,
each variant over 16-128 KB steps, 8-32 warps, 1 or 3 stages: `acc` per-lane int32 flags of the elements, `bits`
16-bit raw bits as int16, `pair` int32 words of two 16-bit elements (a host-side int32 view), `step` our
`_num_nans_kernel` (a sum per step). Each is checked against torch.isnan before it is timed (bench.timers.time_events).
"""
import itertools
import json
import os
import time

import torch
import triton
import triton.language as tl

from bench.timers import Repetitions, time_events
from bench.anchor import anchor_num_nans
from kernel.num_nans import get_num_nans, _num_nans_kernel, plan_for
from kernel.predicate import is_nan_i32

@triton.jit
def acc_kernel(p, stride, out, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    rp = p + row * stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, vocab, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += is_nan_i32(tl.load(rp + offs, mask=offs < vocab, other=0))
    tl.store(out + row, tl.sum(acc, axis=0))

@triton.jit
def bits_kernel(p, stride, out, vocab, BLOCK: tl.constexpr, THR: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    rp = p.to(tl.pointer_type(tl.int16)) + row * stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, vocab, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        b = tl.load(rp + offs, mask=offs < vocab, other=0)
        acc += ((b & 0x7FFF) > THR).to(tl.int32)
    tl.store(out + row, tl.sum(acc, axis=0))

@triton.jit
def pair_kernel(p, stride_w, out, words, BLOCK: tl.constexpr, ADD: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    rp = p + row * stride_w
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        w = tl.load(rp + offs, mask=offs < words, other=0).to(tl.uint32, bitcast=True)
        t = (w & 0x7FFF7FFF) + ADD
        acc += (((t >> 15) & 1) + (t >> 31)).to(tl.int32)
    tl.store(out + row, tl.sum(acc, axis=0))

def main():
    reps = Repetitions(timed=40, warmup=3, host_calls=1, calls=1, rounds=1)
    res = []
    t0 = time.time()
    for dt, rows, vocab in [
            *itertools.product((torch.bfloat16, torch.float16), (1, 2, 4, 16), (128256, 152064, 262144)),
            *itertools.product((torch.float32,), (1, 16), (152064, 262144))]:
        g = torch.Generator(device="cuda").manual_seed(rows * vocab)
        x = torch.randn(rows, vocab, device="cuda", generator=g).to(dt)
        m = torch.rand(rows, vocab, device="cuda", generator=g) < 0.01
        x[m] = float("nan")
        exp = torch.isnan(x).sum(-1).to(torch.int32)
        es = x.element_size()
        cands = {"anchor": lambda: anchor_num_nans(x), "ours": lambda: get_num_nans(x)}
        out = torch.empty(rows, dtype=torch.int32, device="cuda")
        for bb, w, st in itertools.product((16384, 32768, 65536, 131072), (8, 16, 32), (1, 3)):
            blk = bb // es
            if blk > 2 * triton.next_power_of_2(vocab): continue
            cands[f"acc-{bb//1024}K-w{w}-s{st}"] = (lambda blk=blk, w=w, st=st: acc_kernel[(rows,)](
                x, x.stride(0), out, vocab, BLOCK=blk, num_warps=w, num_stages=st))
            cands[f"step-{bb//1024}K-w{w}-s{st}"] = (lambda blk=blk, w=w, st=st: _num_nans_kernel[(rows,)](
                x, x.stride(0), out, vocab, BLOCK_SIZE=blk, num_warps=w, num_stages=st))
            if es == 2:
                thr = 0x7F80 if dt == torch.bfloat16 else 0x7C00
                cands[f"bits-{bb//1024}K-w{w}-s{st}"] = (lambda blk=blk, w=w, st=st, thr=thr: bits_kernel[(rows,)](
                    x, x.stride(0), out, vocab, BLOCK=blk, THR=thr, num_warps=w, num_stages=st))
                xw = x.view(torch.int32)
                add = (0x7FFF - thr) * 0x00010001
                cands[f"pair-{bb//1024}K-w{w}-s{st}"] = (
                    lambda blk=blk // 2, w=w, st=st, add=add, xw=xw: pair_kernel[(rows,)](
                        xw, xw.stride(0), out, xw.shape[1], BLOCK=blk, ADD=add, num_warps=w, num_stages=st))
        shape = {"dtype": str(dt)[6:], "rows": rows, "vocab": vocab, "plan": plan_for(x).variant, "us": {}, "wrong": []}
        for name, fn in cands.items():
            try:
                r = fn(); torch.cuda.synchronize()
                got = r if name in ("anchor", "ours") else out
                if not torch.equal(got, exp):
                    shape["wrong"].append(name); continue
                shape["us"][name] = round(time_events("cuda", fn, reps), 2)
            except Exception as e:
                shape["wrong"].append(f"{name}: {type(e).__name__}: {str(e)[:80]}")
        best = sorted(shape["us"].items(), key=lambda kv: kv[1])[:6]
        a = shape["us"]["anchor"]
        print(f"{shape['dtype']} {rows}x{vocab} anchor {a} ours {shape['us'].get('ours')} "
              f"({a/shape['us'].get('ours', 1e9):.2f}x) best:",
              ", ".join(f"{k} {v} ({a/v:.2f}x)" for k, v in best), "wrong:", shape["wrong"][:3], flush=True)
        res.append(shape)
    out_dir = os.environ.get("NAN_BENCH_OUT", "out")
    json.dump(res, open(os.path.join(out_dir, "decode_sweep.json"), "w"))
    print("total", time.time() - t0)

if __name__ == "__main__":
    main()
