"""Multi-GPU peer timings with PyTorch (a measuring tool, not part of convbench), for the same call as
`convbench allreduce` and `fullpass --gpus N` (scripts/gpu-multi.sh):

  allreduce  torch.distributed all-reduce (NCCL, sum) bus bandwidth over message sizes, timed as
             nccl-tests and convbench time it: back-to-back all-reduces, CUDA events, slowest rank.
  ddp        DistributedDataParallel training step (SGD, momentum 0.9) of torchvision's ResNet-50 or
             VGG-16 on synthetic data, weak scaling (--batch per GPU), 1 GPU then N, median step.
             PyTorch computes no input gradient: compare with `fullpass --no-data-grad`.

One process per GPU (torch.multiprocessing), rendezvous through a file. NVLink multicast stays off.
Usage: python3 bench/peer_dist.py allreduce|ddp --gpus N [--dtype fp32|bf16] [--net resnet50|vgg16]
       [--batch B] [--precision fp32|tf32|bf16] [--layout nchw|nhwc] [--output FILE.json]
"""
import argparse, json, os, statistics, sys, tempfile

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def allreduce_worker(rank, n, a, initf, q):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{initf}", rank=rank, world_size=n)
    dt = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    es = 2 if a.dtype == "bf16" else 4
    rows = []
    size = int(a.min_mb * 1048576)
    while size <= int(a.max_mb * 1048576):
        x = torch.zeros(max(size // es, 1), dtype=dt, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(a.iters + 1)]
        ev[0].record()
        for i in range(a.iters):
            dist.all_reduce(x)
            ev[i + 1].record()
        torch.cuda.synchronize()
        gaps = torch.tensor([ev[i].elapsed_time(ev[i + 1]) for i in range(a.iters)], device="cuda")
        dist.all_reduce(gaps, op=dist.ReduceOp.MAX)  # the slowest rank's, per all-reduce
        t = statistics.median(gaps.tolist()) * 1e-3
        b = x.numel() * es
        rows.append({"bytes": b, "time_us": t * 1e6, "algbw_gbs": b / t / 1e9, "busbw_gbs": b / t / 1e9 * 2 * (n - 1) / n})
        size *= 2
    if rank == 0:
        q.put(rows)
    dist.destroy_process_group()


def make_net(name):
    import torchvision
    return {"resnet50": torchvision.models.resnet50, "vgg16": torchvision.models.vgg16}[name]()


def ddp_worker(rank, n, a, initf, q):
    torch.cuda.set_device(rank)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    if n > 1:
        dist.init_process_group("nccl", init_method=f"file://{initf}", rank=rank, world_size=n)
    torch.manual_seed(0)
    m = make_net(a.net).cuda()
    fmt = torch.channels_last if a.layout == "nhwc" else torch.contiguous_format
    m = m.to(memory_format=fmt)
    if n > 1:
        m = torch.nn.parallel.DistributedDataParallel(m, device_ids=[rank], bucket_cap_mb=25)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(a.batch, 3, 224, 224, device="cuda").to(memory_format=fmt)
    y = torch.randint(0, 1000, (a.batch,), device="cuda")
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = lossf(m(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(a.iters):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        step()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1))
    t = torch.tensor(times, device="cuda")
    if n > 1:
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank's, per step
    if rank == 0:
        q.put({"gpus": n, "batch_per_gpu": a.batch, "step_ms": statistics.median(t.tolist()),
               "peak_mib": torch.cuda.max_memory_allocated() / 1048576})
    if n > 1:
        dist.destroy_process_group()


def spawn(fn, n, a):
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    with tempfile.TemporaryDirectory() as d:
        mp.start_processes(fn, args=(n, a, os.path.join(d, "rdv"), q), nprocs=n, join=True, start_method="spawn")
    return q.get()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["allreduce", "ddp"])
    p.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--min-mb", type=float, default=1)
    p.add_argument("--max-mb", type=float, default=256)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--net", default="resnet50", choices=["resnet50", "vgg16"])
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--precision", default="bf16", choices=["fp32", "tf32", "bf16"])
    p.add_argument("--layout", default="nhwc", choices=["nchw", "nhwc"])
    p.add_argument("--output")
    a = p.parse_args()
    if a.gpus < 1 or a.gpus > torch.cuda.device_count():
        sys.exit(f"peer_dist.py: --gpus {a.gpus}: this machine has {torch.cuda.device_count()} GPUs")
    res = {"peer": f"PyTorch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}",
           "device": torch.cuda.get_device_name(0), "what": a.what, "args": vars(a)}
    if a.what == "allreduce":
        res["rows"] = spawn(allreduce_worker, a.gpus, a)
        for r in res["rows"]:
            print(f"torch all-reduce {a.gpus} GPUs {a.dtype} {r['bytes'] / 1048576:8.1f} MiB  {r['time_us']:9.1f} us  "
                  f"busbw {r['busbw_gbs']:6.1f} GB/s")
    else:
        rows = [spawn(ddp_worker, 1, a)]
        if a.gpus > 1:
            rows.append(spawn(ddp_worker, a.gpus, a))
        s1 = rows[0]["step_ms"]
        for r in rows:
            r["images_per_s"] = 1e3 * r["batch_per_gpu"] * r["gpus"] / r["step_ms"]
            r["scaling_eff_pct"] = 100 * s1 / r["step_ms"]
            print(f"torch DDP {a.net} {a.precision} {a.layout} b{a.batch}/GPU on {r['gpus']} GPU(s): step {r['step_ms']:.2f} ms, "
                  f"{r['images_per_s']:.0f} img/s, efficiency {r['scaling_eff_pct']:.1f}%, peak {r['peak_mib']:.0f} MiB")
        res["rows"] = rows
    if a.output:
        tmp = a.output + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1)
        os.replace(tmp, a.output)


if __name__ == "__main__":
    main()
