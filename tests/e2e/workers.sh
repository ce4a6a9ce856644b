# Sourced by the live tests: ROCEMU_WORKERS=N (default 1) runs rocemu with N worker lcores.
# rocemu_workers_args ARGS... sets the array RW_ARGS to ARGS with EAL's "-l LIST" replaced by
# an --lcores map of N workers onto this machine's CPUs (the main lcore floats over CPUs 0
# and 1; worker k on CPU (k-1) mod 2, so 4 workers oversubscribe two CPUs) and "--workers N"
# after the "--" that ends EAL's options. With N = 1 the arguments are unchanged.
rocemu_workers_args() {
	local n=${ROCEMU_WORKERS:-1} a sep=0 map="0@(0,1)" i
	RW_ARGS=()
	if [ "$n" -le 1 ]; then
		RW_ARGS=("$@")
		return 0
	fi
	for ((i = 1; i <= n; i++)); do
		map+=",$i@$(((i - 1) % 2))"
	done
	while [ $# -gt 0 ]; do
		a=$1
		shift
		if [ $sep -eq 0 ] && [ "$a" = "-l" ]; then
			shift
			RW_ARGS+=(--lcores "$map")
			continue
		fi
		RW_ARGS+=("$a")
		if [ $sep -eq 0 ] && [ "$a" = "--" ]; then
			sep=1
			RW_ARGS+=(--workers "$n")
		fi
	done
}
