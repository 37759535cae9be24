package job

func gated() int {
	return 2
}
