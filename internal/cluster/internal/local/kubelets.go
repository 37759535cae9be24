package local

import (
	"context"
	"crypto"
	"crypto/x509"
	"fmt"
	"os"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/release"
)

// startKubeletNode starts the kubelet node of group g, with a client
// certificate of system:node:<name> (group system:nodes) from the cluster's
// CA, and waits until its Node is Ready.
func (c *Cluster) startKubeletNode(ctx context.Context, g int) error {
	name := KubeletNodeName(g)
	kubeconfig, err := c.nodeKubeconfig(name)
	if err != nil {
		return err
	}
	n, err := kubeletnode.Start(ctx, kubeletnode.Config{
		Name:         name,
		Kubelet:      c.kubeletPath,
		Minor:        release.Minor(c.cfg.Version),
		Kubeconfig:   kubeconfig,
		CACert:       c.pki.path(caCert),
		ServingCert:  c.pki.path(servingCert),
		ServingKey:   c.pki.path(servingKey),
		Labels:       map[string]string{NodeGroupLabel: groupName(g), "type": NodesKubelet},
		FeatureGates: c.cfg.FeatureGates,
		LogDir:       c.cfg.LogDir,
		Port:         c.kubeletPorts[2*g],
		HealthPort:   c.kubeletPorts[2*g+1],
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.kubelets[g] = n
	c.mu.Unlock()
	return c.waitNodes(ctx, []string{name}, c.cfg.StartTimeout, false, nil)
}

// nodeKubeconfig issues the client certificate a kubelet authenticates with.
func (c *Cluster) nodeKubeconfig(name string) (string, error) {
	return c.clientKubeconfig("node-"+name, "system:node:"+name, []string{"system:nodes"})
}

// loadCA reads the cluster CA's certificate and key.
func (p pki) loadCA() (*x509.Certificate, crypto.Signer, error) {
	caPEM, err := os.ReadFile(p.path(caCert))
	if err != nil {
		return nil, nil, err
	}
	ca, err := cert.ParseCertsPEM(caPEM)
	if err != nil || len(ca) == 0 {
		return nil, nil, fmt.Errorf("cluster CA: %v", err)
	}
	keyPEM, err := os.ReadFile(p.path(caKey))
	if err != nil {
		return nil, nil, err
	}
	caPriv, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := caPriv.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("cluster CA key cannot sign")
	}
	return ca[0], signer, nil
}

func (c *Cluster) kubelet(g int) (*kubeletnode.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g < 0 || g >= len(c.kubelets) || c.kubelets[g] == nil {
		return nil, fmt.Errorf("no kubelet node group %d", g)
	}
	return c.kubelets[g], nil
}

// KubeletNodeDirs lists the directories of the cluster's kubelet nodes (for
// checking that a teardown left nothing: kubeletnode.Leftovers).
func (c *Cluster) KubeletNodeDirs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var dirs []string
	for _, n := range c.kubelets {
		if n != nil {
			dirs = append(dirs, n.Dir())
		}
	}
	return dirs
}

// ContainerPIDs lists the processes of every container of the cluster's
// kubelet nodes.
func (c *Cluster) ContainerPIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pids []int
	for _, n := range c.kubelets {
		if n != nil {
			pids = append(pids, n.ContainerPIDs()...)
		}
	}
	return pids
}
