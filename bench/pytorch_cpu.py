"""The CPU peer: PyTorch (Debian's python3-torch) timing the same training step convbench's
`fullpass --update` does: forward, softmax cross-entropy, backward, SGD with momentum 0.9 and
weight decay 5e-4; median of K iterations after W warm-ups. Prints one JSON object.

    /usr/bin/python3 bench/pytorch_cpu.py alexnet 16 [--iters 5 --warmup 1]
"""
import argparse, json, os, statistics as st, time
import torch, torch.nn as nn


def conv(i, o, k, s=1, p=0):
    return nn.Sequential(nn.Conv2d(i, o, k, s, p), nn.ReLU(inplace=True))


def alexnet():  # convnet-benchmarks' "one weird trick" AlexNet, as nets/alexnet.json
    return nn.Sequential(conv(3, 64, 11, 4, 2), nn.MaxPool2d(3, 2), conv(64, 192, 5, 1, 2), nn.MaxPool2d(3, 2),
                         conv(192, 384, 3, 1, 1), conv(384, 256, 3, 1, 1), conv(256, 256, 3, 1, 1), nn.MaxPool2d(3, 2),
                         nn.Flatten(), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(True), nn.Dropout(),
                         nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(), nn.Linear(4096, 1000))


def vgg16():  # as nets/vgg16.json
    layers, c = [], 3
    for v in [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M']:
        if v == 'M':
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers.append(conv(c, v, 3, 1, 1))
            c = v
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True),
                         nn.Linear(4096, 4096), nn.ReLU(True), nn.Linear(4096, 1000))  # no dropout, as the json


NETS = {'alexnet': alexnet, 'vgg16': vgg16}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('net', choices=sorted(NETS))
    ap.add_argument('batch', type=int)
    ap.add_argument('--iters', type=int, default=5)
    ap.add_argument('--warmup', type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(os.cpu_count())  # Debian's build may start with one thread
    torch.manual_seed(0)
    m = NETS[a.net]()
    x = torch.randn(a.batch, 3, 224, 224)
    y = torch.randint(0, 1000, (a.batch,))
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    crit = nn.CrossEntropyLoss()
    fw, bw, up, tot = [], [], [], []
    for i in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        out = m(x)
        loss = crit(out, y)
        t1 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        if i >= a.warmup:
            fw.append((t1 - t0) * 1e3); bw.append((t2 - t1) * 1e3); up.append((t3 - t2) * 1e3); tot.append((t3 - t0) * 1e3)
    print(json.dumps(dict(peer='pytorch', torch=torch.__version__, threads=torch.get_num_threads(),
                          mkldnn=torch.backends.mkldnn.is_available(), net=a.net, batch=a.batch, iters=a.iters,
                          forward_ms=st.median(fw), backward_ms=st.median(bw), update_ms=st.median(up),
                          total_ms=st.median(tot))))
