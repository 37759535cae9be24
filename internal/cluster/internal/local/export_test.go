package local

// Args exposes a component's current flags to the integration specs.
func Args(c *Cluster, comp Component) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.procs[comp].Args()...)
}

// ListenAddresses is the method, as a function for Gomega.
func ListenAddresses(c *Cluster) []string {
	addrs, err := c.ListenAddresses()
	if err != nil {
		panic(err)
	}
	return addrs
}

// LogPath is where a component's log is written.
func LogPath(c *Cluster, comp Component) string {
	return c.procs[comp].LogPath
}

// SetKwokPath makes node groups started from now on run path as kwok, and
// returns the path it replaced.
func SetKwokPath(c *Cluster, path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.kwokPath
	c.kwokPath = path
	return old
}

// GroupLogPath is where node group g's kwok process writes its log.
func GroupLogPath(c *Cluster, g int) string {
	p, err := c.group(g)
	if err != nil {
		panic(err)
	}
	return p.LogPath
}
