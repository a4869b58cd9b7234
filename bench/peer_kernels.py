"""Where PyTorch's time goes on one workload of bench/peer_pytorch.py (a measuring tool, not part of
convbench): torch.profiler over a few forward+backward steps, the GPU kernels summed per name and
divided by the steps, the largest first. For comparing with convbench's per-layer profile.
  python3 bench/peer_kernels.py NET MODE LAYOUT [--steps 5] [--top 30] [--graph-dir DIR: NET.graph.json for a net not built in]"""
import argparse, collections, os, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_pytorch as P

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument('net'); ap.add_argument('mode'); ap.add_argument('layout')
ap.add_argument('--steps', type=int, default=5); ap.add_argument('--top', type=int, default=30)
ap.add_argument('--update', action='store_true'); ap.add_argument('--batch', type=int)
ap.add_argument('--graph-dir', help='NAME.graph.json files (convbench summary NET --graph --format json) for nets not built in')
a = ap.parse_args()
P.set_mode(a.mode)
P.GRAPH_DIR = a.graph_dir
ctor, b, hw = P.NETS[a.net] if a.net in P.NETS else P.graph_net(a.net)
b = a.batch or b
m = ctor().to(P.dev)
c, h, w = hw if isinstance(hw, tuple) else (3, hw, hw)
x = torch.randn(b, c, h, w, device=P.dev)
if a.layout == 'nhwc':
    m = m.to(memory_format=torch.channels_last); x = x.contiguous(memory_format=torch.channels_last)
opt = torch.optim.SGD(m.parameters(), lr=0.01) if a.update else None
def step():
    with torch.autocast('cuda', dtype=torch.bfloat16, enabled=(a.mode == 'bf16')):
        y = m(x)
    y.float().sum().backward()
    if opt: opt.step(); opt.zero_grad(set_to_none=True)
for _ in range(5): step()
torch.cuda.synchronize()
acts = [torch.profiler.ProfilerActivity.CUDA]
with torch.profiler.profile(activities=acts) as prof:
    for _ in range(a.steps): step()
    torch.cuda.synchronize()
tot = collections.defaultdict(float); cnt = collections.Counter()
for ev in prof.events():
    if ev.device_type == torch.autograd.DeviceType.CUDA:
        tot[ev.name] += ev.device_time_total if hasattr(ev, 'device_time_total') else ev.cuda_time_total
        cnt[ev.name] += 1
all_ms = sum(tot.values()) / 1e3 / a.steps
print(f'# PyTorch {torch.__version__} cuDNN {torch.backends.cudnn.version()} {a.net} b{b} {a.mode} {a.layout}: '
      f'{all_ms:.2f} ms of kernels per step')
print('| ms/step | calls/step | kernel |\n|---|---|---|')
for name, t in sorted(tot.items(), key=lambda kv: -kv[1])[:a.top]:
    print(f'| {t / 1e3 / a.steps:.3f} | {cnt[name] / a.steps:g} | {name[:110]} |')
