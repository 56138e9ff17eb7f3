package engine

import "runtime"

func workerCount() int {
	n := runtime.GOMAXPROCS(0) * 2
	if n < 2 {
		n = 2
	}
	return n
}
