package job

type Controller struct{}

func (c *Controller) Sync(n int) int {
	if n > 0 {
		return n
	}
	return 0
}

func unused() int {
	return 1
}
