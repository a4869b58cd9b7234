# Copied from /work/shared/peers/pytorch_convnets.py (the shared PyTorch peer harness) so that it
# travels with the repo to the GPU machine; a measuring tool, not part of convbench. Keep in sync.
"""Peer timings on an NVIDIA GPU with PyTorch (a measuring tool, not part of the project): the convnet-benchmarks 'imagenet winners'
(forward, backward over batch), the layer-wise L1-L5 convs, and a VGG16 b16 train step.
Modes: fp32 (tf32 off), tf32, bf16 autocast; NCHW and channels_last. Median of CUDA-event times."""
import os, sys, json, time, statistics as st
import torch, torch.nn as nn, torch.nn.functional as F

dev = 'cuda'
torch.backends.cudnn.benchmark = True

def seq(*m): return nn.Sequential(*m)
def conv(i, o, k, s=1, p=0): return seq(nn.Conv2d(i, o, k, s, p), nn.ReLU(inplace=True))

def alexnet():  # One Weird Trick AlexNet as in convnet-benchmarks
    return seq(conv(3,64,11,4,2), nn.MaxPool2d(3,2), conv(64,192,5,1,2), nn.MaxPool2d(3,2),
               conv(192,384,3,1,1), conv(384,256,3,1,1), conv(256,256,3,1,1), nn.MaxPool2d(3,2),
               nn.Flatten(), nn.Linear(256*6*6,4096), nn.ReLU(True), nn.Linear(4096,4096), nn.ReLU(True), nn.Linear(4096,1000))

def overfeat():  # Overfeat fast, input 231
    return seq(conv(3,96,11,4), nn.MaxPool2d(2,2), conv(96,256,5), nn.MaxPool2d(2,2),
               conv(256,512,3,1,1), conv(512,1024,3,1,1), conv(1024,1024,3,1,1), nn.MaxPool2d(2,2),
               nn.Flatten(), nn.Linear(1024*6*6,3072), nn.ReLU(True), nn.Linear(3072,4096), nn.ReLU(True), nn.Linear(4096,1000))

def vgg(cfg):
    L, c = [], 3
    for v in cfg:
        if v == 'M': L.append(nn.MaxPool2d(2,2))
        else: L.append(conv(c, v, 3, 1, 1)); c = v
    return seq(*L, nn.Flatten(), nn.Linear(512*7*7,4096), nn.ReLU(True), nn.Linear(4096,4096), nn.ReLU(True), nn.Linear(4096,1000))

VGG_A = [64,'M',128,'M',256,256,'M',512,512,'M',512,512,'M']
VGG_16 = [64,64,'M',128,128,'M',256,256,256,'M',512,512,512,'M',512,512,512,'M']

class Inception(nn.Module):
    def __init__(s, i, c1, c3r, c3, c5r, c5, pp):
        super().__init__()
        s.b1 = conv(i,c1,1); s.b2 = seq(conv(i,c3r,1), conv(c3r,c3,3,1,1))
        s.b3 = seq(conv(i,c5r,1), conv(c5r,c5,5,1,2)); s.b4 = seq(nn.MaxPool2d(3,1,1), conv(i,pp,1))
    def forward(s, x): return torch.cat([s.b1(x), s.b2(x), s.b3(x), s.b4(x)], 1)

def googlenet():  # GoogLeNet v1 without BN, no aux heads
    return seq(conv(3,64,7,2,3), nn.MaxPool2d(3,2,ceil_mode=True), conv(64,64,1), conv(64,192,3,1,1), nn.MaxPool2d(3,2,ceil_mode=True),
               Inception(192,64,96,128,16,32,32), Inception(256,128,128,192,32,96,64), nn.MaxPool2d(3,2,ceil_mode=True),
               Inception(480,192,96,208,16,48,64), Inception(512,160,112,224,24,64,64), Inception(512,128,128,256,24,64,64),
               Inception(512,112,144,288,32,64,64), Inception(528,256,160,320,32,128,128), nn.MaxPool2d(3,2,ceil_mode=True),
               Inception(832,256,160,320,32,128,128), Inception(832,384,192,384,48,128,128), nn.AvgPool2d(7,1),
               nn.Flatten(), nn.Linear(1024,1000))

def tv(name):  # a torchvision model, untrained: convbench's nets/ of the same name are checked against these
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None)
    return make

NETS = {'alexnet': (alexnet, 128, 224), 'overfeat': (overfeat, 128, 231), 'vgg_a': (lambda: vgg(VGG_A), 64, 224),
        'googlenet': (googlenet, 128, 224), 'vgg16': (lambda: vgg(VGG_16), 64, 224), 'resnet50': (tv('resnet50'), 64, 224),
        'resnext50': (tv('resnext50_32x4d'), 64, 224), 'mobilenet-v2': (tv('mobilenet_v2'), 128, 224),
        'efficientnet-b0': (tv('efficientnet_b0'), 128, 224), 'convnext-tiny': (tv('convnext_tiny'), 64, 224),
        # outside the built-ins (dev/gen_resnets.py writes convbench's dev/nets/resnet34.json and resnet101.json)
        'resnet34': (tv('resnet34'), 256, 224), 'resnet101': (tv('resnet101'), 128, 224)}

GRAPH_DIR = None  # --graph-dir: NAME.graph.json files (`convbench summary NET --graph --format json`)

def graph_net(name):  # a network without a definition here, built from convbench's expanded graph (bench/peer_graph.py)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from peer_graph import graph_module
    path = os.path.join(GRAPH_DIR or '.', name + '.graph.json')
    if not os.path.exists(path): raise KeyError("net '%s': not built in, and no %s" % (name, path))
    m, chw, b = graph_module(path)
    return (lambda: m), b, chw

def set_mode(mode):
    tf = mode == 'tf32'
    torch.backends.cudnn.allow_tf32 = tf
    torch.backends.cuda.matmul.allow_tf32 = tf

def ev(): return torch.cuda.Event(enable_timing=True)

def time_net(name, mode, cl, iters=20, warm=5, update=False, batch=None, compiled=False):
    # the model in training mode (batch norm on batch statistics); the input needs no gradient
    # (PyTorch computes none for it: compare with convbench's --no-data-grad); compiled: False, or
    # the torch.compile mode the module goes through ('default'; 'reduce-overhead' also replays
    # the compiled forward and backward as CUDA graphs), compile time spent in the warm-up
    set_mode(mode)
    ctor, b, hw = NETS[name] if name in NETS else graph_net(name)
    b = batch or b
    m = ctor().to(dev).train()
    c, h, w = hw if isinstance(hw, tuple) else (3, hw, hw)
    x = torch.randn(b, c, h, w, device=dev)
    if cl: m = m.to(memory_format=torch.channels_last); x = x.contiguous(memory_format=torch.channels_last)
    x.requires_grad_(False)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4) if update else None
    if compiled: m = torch.compile(m, mode=compiled if isinstance(compiled, str) else 'default'); warm = max(warm, 3)
    graphs = compiled == 'reduce-overhead'

    torch.cuda.reset_peak_memory_stats()
    fw, bw, tot = [], [], []
    for i in range(warm + iters):
        a, bb, c = ev(), ev(), ev()
        if graphs: torch.compiler.cudagraph_mark_step_begin()  # a new step: the graphs' outputs may be overwritten
        a.record()
        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=(mode == 'bf16')):
            y = m(x)
        bb.record()
        y.float().sum().backward()
        if opt: opt.step(); opt.zero_grad(set_to_none=True)
        else: m.zero_grad(set_to_none=True)  # as a training loop does (reduce-overhead refuses to add into a replayed graph's output)
        c.record(); torch.cuda.synchronize()
        if i >= warm:
            fw.append(a.elapsed_time(bb)); bw.append(bb.elapsed_time(c)); tot.append(a.elapsed_time(c))
    peak, reserved = torch.cuda.max_memory_allocated() / 2**20, torch.cuda.max_memory_reserved() / 2**20
    del m, x, opt
    torch.cuda.empty_cache()
    if compiled: torch._dynamo.reset()
    return dict(net=name, mode=mode, layout='NHWC' if cl else 'NCHW', batch=b, update=update, compiled=bool(compiled),
                compile_mode=(compiled if isinstance(compiled, str) else 'default') if compiled else None, fwd=st.median(fw), bwd=st.median(bw), total=st.median(tot), peak_mib=peak,
                reserved_mib=reserved)

LAYERS = {'L1': (128, 3, 128, 96, 11), 'L2': (128, 64, 64, 128, 9), 'L3': (128, 128, 32, 128, 9),
          'L4': (128, 128, 16, 128, 7), 'L5': (128, 384, 13, 384, 3)}

def time_layer(name, mode, cl, iters=30, warm=5):
    set_mode(mode)
    n, c, hw, k, r = LAYERS[name]
    w = torch.randn(k, c, r, r, device=dev, requires_grad=True)
    x = torch.randn(n, c, hw, hw, device=dev, requires_grad=True)
    if cl:
        x = x.detach().contiguous(memory_format=torch.channels_last).requires_grad_(True)
        w = w.detach().contiguous(memory_format=torch.channels_last).requires_grad_(True)
    fw, bw = [], []
    for i in range(warm + iters):
        a, bb, cc = ev(), ev(), ev()
        a.record()
        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=(mode == 'bf16')):
            y = F.conv2d(x, w)
        bb.record()
        y.backward(torch.ones_like(y))
        cc.record(); torch.cuda.synchronize()
        if i >= warm: fw.append(a.elapsed_time(bb)); bw.append(bb.elapsed_time(cc))
    flops = 2 * n * k * c * r * r * (hw - r + 1) ** 2
    f, b = st.median(fw), st.median(bw)
    return dict(layer=name, mode=mode, layout='NHWC' if cl else 'NCHW', fwd=f, bwd=b,
                fwd_tflops=flops / f / 1e9, bwd_tflops=2 * flops / b / 1e9)

if __name__ == '__main__':
    import argparse
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('out', help='JSON file for all results')
    ap.add_argument('--nets', default='alexnet,overfeat,vgg_a,googlenet,vgg16-train')
    ap.add_argument('--layers', default='L1,L2,L3,L4,L5')
    ap.add_argument('--modes', default='fp32,tf32,bf16')
    ap.add_argument('--layouts', default='nchw,nhwc')
    ap.add_argument('--compile', action='store_true', help='each net eager and through torch.compile (--compile-modes)')
    ap.add_argument('--compile-modes', default='default', help="torch.compile modes with --compile, e.g. default,reduce-overhead")
    ap.add_argument('--graph-dir', help='NAME.graph.json files (convbench summary NET --graph --format json) for nets not built in')
    a = ap.parse_args()
    GRAPH_DIR = a.graph_dir
    out = []
    print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
    for mode in a.modes.split(','):
        for cl in [l == 'nhwc' for l in a.layouts.split(',')]:
            for L in filter(None, a.layers.split(',')):
                r = time_layer(L, mode, cl); out.append(r); print(json.dumps(r), flush=True)
            # a net: NAME, NAME:BATCH, NAME:BATCH:train (with the SGD update), or vgg16-train (b16 + update)
            for n in filter(None, a.nets.split(',')):
                f = n.split(':')
                name, batch, upd = f[0], int(f[1]) if len(f) > 1 else None, len(f) > 2 and f[2] == 'train'
                if name == 'vgg16-train': name, batch, upd = 'vgg16', 16, True
                for comp in ([False] + (a.compile_modes.split(',') if a.compile else [])):
                    try:
                        r = time_net(name, mode, cl, update=upd, batch=batch, compiled=comp)
                    except Exception as ex:  # a compile failure is a result too, not the end of the run
                        r = dict(net=name, mode=mode, layout='NHWC' if cl else 'NCHW', batch=batch, compiled=bool(comp),
                                 compile_mode=comp or None, error=str(ex)[:300])
                    out.append(r); print(json.dumps(r), flush=True)
    json.dump(out, open(a.out, 'w'), indent=1)
