"""Times the planner's choice between kernel families on the GPU: the plain Triton matmul and the
split-K matmul of bench/python/triton_kernels.py, each family's top 3 configurations by
`simulate plan --device h200` at three f16 shapes (C below, from the planner of commit 81d4a71:
each graph planned alone with --top 3), with torch tensors and triton.testing.do_bench (warm-up
50 ms, 200 ms timed; the median). A split-K launch is timed with the zeroing of C it needs
(`us`) and alone (`kernel_us`). Writes $OUT/t.json: the device, Triton's version and per
configuration its time and its largest error against torch's product, relative to the largest
value (docs/planner.md, "Kernel families"; docs/validation/data/planner/README.md).

    OUT=DIR python3 bench/planner/time_matmul_families.py     # from the repository root, on the GPU machine
"""
import os,sys,json,torch,triton
sys.path.insert(0,"bench/python")
from triton_kernels import matmul_kernel as PK, matmul_splitk_kernel as SK
from triton.testing import do_bench
# (M, N, K, family: p plain / s split-K, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS, SPLIT_K)
C=[(16,4096,14336,"p",64,32,64,4,4,1),(16,4096,14336,"p",64,32,128,4,4,1),(16,4096,14336,"p",64,64,64,4,4,1),(16,4096,14336,"s",32,128,64,2,4,4),(16,4096,14336,"s",32,64,128,2,4,2),(16,4096,14336,"s",32,64,128,2,4,4),(512,4096,4096,"p",128,128,32,4,4,1),(512,4096,4096,"p",128,128,32,4,8,1),(512,4096,4096,"p",128,128,64,4,4,1),(512,4096,4096,"s",256,128,64,4,8,2),(512,4096,4096,"s",256,128,32,4,8,2),(512,4096,4096,"s",256,128,64,3,8,2),(8192,8192,8192,"p",128,256,64,4,8,1),(8192,8192,8192,"p",128,256,32,4,8,1),(8192,8192,8192,"p",256,128,64,4,8,1),(8192,8192,8192,"s",256,128,64,4,8,2),(8192,8192,8192,"s",256,128,32,4,8,2),(8192,8192,8192,"s",256,128,64,4,8,4)]
R=[];T={}
for M,N,K,f,bm,bn,bk,st,w,sk in C:
 if (M,N,K) not in T:
  a=torch.randn(M,K,device="cuda",dtype=torch.float16);b=torch.randn(K,N,device="cuda",dtype=torch.float16);c=torch.empty(M,N,device="cuda",dtype=torch.float16);T[(M,N,K)]=(a,b,c,(a@b).float())
 a,b,c,ref=T[(M,N,K)];g=triton.cdiv(M,bm)*triton.cdiv(N,bn)
 args=(a,b,c,M,N,K)+a.stride()+b.stride()+c.stride()
 kw=dict(BLOCK_M=bm,BLOCK_N=bn,BLOCK_K=bk,GROUP_M=8,num_stages=st,num_warps=w)
 if f=="p":
  run=lambda:PK[(g,)](*args,**kw);kern=run
 else:
  kern=lambda:SK[(g,sk)](*args,SPLIT_K=sk,**kw)
  def run():
   c.zero_();kern()
 run();torch.cuda.synchronize();err=(c.float()-ref).abs().max().item()/ref.abs().max().item()
 ms=do_bench(run,warmup=50,rep=200);mk=do_bench(kern,warmup=50,rep=200) if f=="s" else ms
 R.append(dict(M=M,N=N,K=K,family=f,BLOCK_M=bm,BLOCK_N=bn,BLOCK_K=bk,NUM_STAGES=st,NUM_WARPS=w,SPLIT_K=sk,us=ms*1e3,kernel_us=mk*1e3,rel_err=err))
 print(R[-1])
json.dump(dict(device=torch.cuda.get_device_name(),triton=triton.__version__,timings=R),open(os.environ["OUT"]+"/t.json","w"))
