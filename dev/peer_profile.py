#!/usr/bin/env python3
"""Where PyTorch's training step spends its GPU time, kernel by kernel (torch.profiler), for the same
network convbench runs: a built-in of bench/peer_pytorch.py or a NAME.graph.json file (`convbench
summary NET --graph --format json`, built by bench/peer_graph.py). Eager, or torch.compile with
--compile. Prints the kernels by total GPU time per step, largest first, and their sum.

  python3 dev/peer_profile.py gen-mobile-s12 --graph-dir RES/graphs --batch 192 --mode bf16 --top 30
"""
import argparse, collections, os, sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench'))
import peer_pytorch as pp  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('net')
    ap.add_argument('--graph-dir', help='NAME.graph.json files for networks not built in')
    ap.add_argument('--batch', type=int)
    ap.add_argument('--mode', default='bf16', choices=['fp32', 'tf32', 'bf16'])
    ap.add_argument('--layout', default='nhwc', choices=['nchw', 'nhwc'])
    ap.add_argument('--compile', action='store_true', help='through torch.compile (default mode)')
    ap.add_argument('--steps', type=int, default=5, help='profiled steps (after 5 unprofiled ones)')
    ap.add_argument('--top', type=int, default=25)
    a = ap.parse_args()
    pp.GRAPH_DIR = a.graph_dir
    pp.set_mode(a.mode)
    ctor, b, hw = pp.NETS[a.net] if a.net in pp.NETS else pp.graph_net(a.net)
    b = a.batch or b
    dev = torch.device('cuda')
    m = ctor().to(dev).train()
    c, h, w = hw if isinstance(hw, tuple) else (3, hw, hw)
    x = torch.randn(b, c, h, w, device=dev)
    if a.layout == 'nhwc':
        m = m.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    if a.compile:
        m = torch.compile(m)

    def step():
        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=(a.mode == 'bf16')):
            y = m(x)
        y.float().sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
    tot = collections.Counter()
    cnt = collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            tot[e.name] += e.device_time_total if hasattr(e, 'device_time_total') else e.cuda_time_total
            cnt[e.name] += 1
    allus = sum(tot.values())
    print('%s b%d %s %s %s: GPU kernel time %.3f ms a step over %d kernels a step' %
          (a.net, b, a.mode, a.layout, 'compiled' if a.compile else 'eager', allus / 1e3 / a.steps, sum(cnt.values()) // a.steps))
    print('| ms a step | calls a step | kernel |')
    print('|---:|---:|---|')
    for name, us in tot.most_common(a.top):
        print('| %.3f | %d | %s |' % (us / 1e3 / a.steps, cnt[name] // a.steps, name[:150]))


if __name__ == '__main__':
    main()
