#!/bin/bash
# Diagnostic: why the full/lean megakernels are slow (ncu), HEAD vs 5beb205.
cd "$(dirname "$0")/.."
export CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $OUT/d
for b in wavepath wavepath-5beb205; do xz -dc gpu-run/$b.xz > /tmp/$b; chmod +x /tmp/$b; done
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/d/gpu.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "ncu=$NCU" | tee -a $OUT/d/gpu.txt
S=scenes/rtiow_final.toml
run() { # name, binary, args...
  local n=$1 b=$2; shift 2
  /usr/bin/time -f "$n wall %e s" /tmp/$b render $S --backend gpu-mega --out /tmp/$n.png "$@" 2>&1 | tail -3 | tee -a $OUT/d/times.txt
  if [[ -n $NCU ]]; then
    timeout 150 $NCU --target-processes all -k regex:megakernel -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --section SourceCounters \
      --metrics smsp__inst_executed.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,smsp__thread_inst_executed.sum,sm__cycles_elapsed.max \
      -o $OUT/d/$n -f /tmp/$b render $S --backend gpu-mega --out /tmp/$n-ncu.png "$@" > $OUT/d/$n.ncu.txt 2>&1
    echo "ncu rc=$?" >> $OUT/d/$n.ncu.txt
    $NCU -i $OUT/d/$n.ncu-rep --page details >> $OUT/d/$n.ncu.txt 2>&1
    $NCU -i $OUT/d/$n.ncu-rep --page source --csv --print-source sass 2>/dev/null | xz -9 > $OUT/d/$n.sass.csv.xz
  fi
}
run head-plain wavepath --kernels plain
run head-full wavepath --kernels full
run old-full wavepath-5beb205
ls -la $OUT/d
