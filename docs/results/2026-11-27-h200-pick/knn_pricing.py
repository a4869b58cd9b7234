#!/usr/bin/env python3
"""A negative result (issue 14): price each held-out convolution row of the 2026-11-25 call-4 H200 data
(fp32, cuDNN) by its k nearest calibration samples of the algorithm cuDNN ran (log features: batch,
channels, filters, output plane, filter taps, stride, grouped), scaled by FLOPs, instead of the
fitted model. CPU only; after `python3 tools/gen_random_net.py --suite /tmp/gen-nets --seeds 1-3
--max-gflop 400` and a build. Usage: python3 docs/results/2026-11-27-h200-pick/knn_pricing.py"""
import gzip, json, glob, os, subprocess, statistics, math, collections
D='docs/results/2026-11-25-h200-bias/call4'
cal=json.load(gzip.open(D+'/h200-cal.json.gz', 'rt'))['samples']
# calibration conv samples: shape [n,c,h,w,k,r,s,p,q,sh,sw,pt,pl,groups]
S=collections.defaultdict(list)
for x in cal:
    if x['kind']!='conv' or x['precision']!='fp32' or x['ms']<=0: continue
    n,c,h,w,k,r,s,p,q,sh,sw,pt,pl,g=x['shape']
    S[(x['name'],x['phase'])].append(dict(n=n,c=c,k=k,r=r,s=s,p=p,q=q,st=sh,g=g,ms=x['ms']))
def flops(d): return 2.0*d['n']*d['k']*d['p']*d['q']*(d['c']/d['g'])*d['r']*d['s']
def feat(d): return [math.log(d['n']),math.log(d['c']/d['g']),math.log(d['k']),math.log(d['p']*d['q']),math.log(d['r']*d['s']),math.log(d['st']),1.0 if d['g']>1 else 0.0]
def dist(a,b): 
    fa,fb=feat(a),feat(b); return math.sqrt(sum((x-y)**2*wt for x,y,wt in zip(fa,fb,[1,1,1,1,1,1,25])))
rows=[]
for prof in sorted(glob.glob(D+'/profiles/*.json')):
    base=os.path.basename(prof).replace('-fp32.json','')
    net=f'/tmp/gen-nets/{base}.json' if base.startswith('gen') else base
    batch=str(json.load(open(prof)).get('batch',''))
    summ=json.loads(subprocess.run(['build/convbench','summary',net,'--batch',batch,'--format','json','--quiet'],capture_output=True,text=True).stdout)
    L={}
    for t in summ['tables']['layers']:
        if t['type']!='Convolution': continue
        o=json.loads(t['output']); grouped='grouped' in t['filters']; f=json.loads(t['filters'].split(']')[0]+']'); st=int(t['stride'].split(',')[0])
        # filters [r,s,cin_per_group,k]; groups from params? cin from previous layer unknown: use cin_per_group and k
        L[t['layer']]=dict(n=o[0],p=o[1],q=o[2],k=o[3],r=f[0],s=f[1],cg=f[2],st=st,grouped=grouped)
    pr=json.loads(subprocess.run(['build/convbench','predict',net,'--device',D+'/h200-cal.json.gz','--measure',prof,'--batch',batch,'--precision','fp32','--format','json','--quiet'],capture_output=True,text=True).stdout)
    for r in pr['tables']['compare']:
        a=(r.get('measured_alg') or '').split(' (')[0]
        if r['layer'] not in L or not a or a.startswith('own') or not r.get('model_ms'): continue
        l=L[r['layer']]
        ph={'fwd':'forward','bwd_data':'bwd_data','bwd_filter':'bwd_filter'}[r['direction']]
        # groups: depthwise when cg==1 and k>1 -> assume g=k (channel multiplier 1)
        g = l['k']//l['cg'] if l['grouped'] else 1
        d=dict(n=l['n'],c=l['cg']*g,k=l['k'],r=l['r'],s=l['s'],p=l['p'],q=l['q'],st=l['st'],g=g)
        rows.append((base,r['layer'],ph,a,d,r['measured_ms'],r['model_ms'],r.get('model_alg')))
print(len(rows),'rows')
def knn_pred(a,ph,d,k=3):
    c=S.get((a,ph),[])
    if not c: return None
    nb=sorted(c,key=lambda x:dist(x,d))[:k]
    fl=flops(d)
    vals=[x['ms']*fl/flops(x) for x in nb]
    # inverse distance weighting in log space
    ws=[1/(1e-3+dist(x,d)) for x in nb]
    return math.exp(sum(w*math.log(v) for w,v in zip(ws,vals))/sum(ws))
res=collections.defaultdict(list)
for base,layer,ph,a,d,meas,model,malg in rows:
    for k in (1,3,5):
        p=knn_pred(a,ph,d,k)
        if p: res[('knn%d'%k,'all')].append(abs(p-meas)/meas*100); res[('knn%d'%k,ph)].append(abs(p-meas)/meas*100)
    if malg==a: res[('model(same algo)','all')].append(abs(model-meas)/meas*100); res[('knn3 on same-algo rows','all')].append(abs(knn_pred(a,ph,d,3)-meas)/meas*100 if knn_pred(a,ph,d,3) else 1e9)
for k,v in sorted(res.items()):
    v=sorted(v); print(k,len(v),'median %.1f p90 %.1f'%(statistics.median(v),v[int(.9*len(v))]))
