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
