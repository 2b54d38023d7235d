# Per K element of the loop of every compiled timing tile of the CUDA backend's GEMM, from
# cuda_gemm_ncu.sh's CSV and launch order (docs/validation/planner-h100.md). Run in the folder holding
# gemm_ncu.csv and gemm_ncu_order.json.
import csv,io,json
t=open('gemm_ncu.csv').read(); rows=list(csv.DictReader(io.StringIO(t[t.find('"ID"'):])))
by={}
for r in rows: by.setdefault(int(r['ID']),{})[r['Metric Name']]=float(r['Metric Value'].replace(',',''))
order=json.load(open('gemm_ncu_order.json'))['timings']
ids=sorted(by)
res=[]
for i in range(0,len(order),2):
    lo,hi=order[i],order[i+1]
    assert lo['config']==hi['config'] and lo['K']<hi['K']
    mlo=by[ids[2*i+1]]; mhi=by[ids[2*(i+1)+1]]
    c=lo['config']; BM,BN,BK,W=c['BLOCK_M'],c['BLOCK_N'],c['BLOCK_K'],c['NUM_WARPS']
    grid=(1024//BM)*(1024//BN); dk=hi['K']-lo['K']
    d={k:(mhi[k]-mlo[k])/dk/grid for k in mlo}
    cyc=(mhi['sm__cycles_active.avg']-mlo['sm__cycles_active.avg'])/dk
    res.append((lo['dtype'],BM,BN,BK,W,grid,d,cyc))
print("dt BM BN BK W grid | ldWF ldBC ldInstr ldgstsWF | fma_cyc/4 ffma/32 | SMcyc/Kelt(per SM) blocks/SM | model BM+4W")
for dt,BM,BN,BK,W,grid,d,cyc in res:
    bps=grid/132
    print(dt,BM,BN,BK,W,grid,'| %.1f %.1f %.2f %.2f | %.1f %.1f | %.1f %.2f | %d'%(d['l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum'],d['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'],d['smsp__inst_executed_op_shared_ld.sum'],d['smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum'],d['sm__pipe_fma_cycles_active.sum']/4,d['smsp__sass_thread_inst_executed_op_ffma_pred_on.sum']/32, cyc, bps, BM+4*W))
json.dump([(dt,BM,BN,BK,W,grid,d,cyc) for dt,BM,BN,BK,W,grid,d,cyc in res],open('an.json','w'))
