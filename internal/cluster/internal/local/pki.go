package local

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// pki holds the paths of the certificates and keys one cluster uses. ECDSA keys
// keep generation in the milliseconds, which matters for start-to-ready time.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// Files written by generate.
const (
	caCert      = "ca.crt"
	caKey       = "ca.key"
	servingCert = "serving.crt" // 127.0.0.1 / localhost, shared by the apiserver, controller-manager and scheduler
	servingKey  = "serving.key"
	saKey       = "sa.key" // service-account token signing key
	saPub       = "sa.pub"
	adminCert   = "admin.crt"
	adminKey    = "admin.key"
	kcmCert     = "kube-controller-manager.crt"
	kcmKey      = "kube-controller-manager.key"
	schedCert   = "kube-scheduler.crt"
	schedKey    = "kube-scheduler.key"
	kwokCert    = "kwok.crt"
	kwokKey     = "kwok.key"
)

// clientIdentity is a client certificate to generate: CN is the user, O the groups.
type clientIdentity struct {
	cert, key string
	cn        string
	orgs      []string
}

var clientIdentities = []clientIdentity{
	{adminCert, adminKey, "jobconform-admin", []string{"system:masters"}},
	{kcmCert, kcmKey, "system:kube-controller-manager", nil},
	{schedCert, schedKey, "system:kube-scheduler", nil},
	// kwok plays the kubelets of many nodes; the Node authorizer would confine a
	// real kubelet to its own node, which one kwok process per node group cannot be.
	{kwokCert, kwokKey, "jobconform-kwok", []string{"system:masters"}},
}

// generate writes a fresh CA, a serving certificate for loopback, client
// certificates for each component and the service-account key pair.
func (p pki) generate() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	caPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "jobconform-ca"}, caPriv)
	if err != nil {
		return fmt.Errorf("CA certificate: %w", err)
	}
	if err := p.writePair(caCert, caKey, ca, caPriv); err != nil {
		return err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "jobconform-serving"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(serviceClusterIP)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := p.issue(servingCert, servingKey, serving, ca, caPriv); err != nil {
		return err
	}
	for _, id := range clientIdentities {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: id.cn, Organization: id.orgs},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := p.issue(id.cert, id.key, tmpl, ca, caPriv); err != nil {
			return err
		}
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saPEM, err := keyutil.MarshalPrivateKeyToPEM(sa)
	if err != nil {
		return err
	}
	if err := keyutil.WriteKey(p.path(saKey), saPEM); err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	return os.WriteFile(p.path(saPub), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
}

// issue signs tmpl with the CA and writes the certificate and a new key.
func (p pki) issue(certName, keyName string, tmpl *x509.Certificate, ca *x509.Certificate, caPriv crypto.Signer) error {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour).UTC()
	tmpl.NotAfter = time.Now().Add(365 * 24 * time.Hour).UTC()
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &priv.PublicKey, caPriv)
	if err != nil {
		return fmt.Errorf("certificate %s: %w", certName, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	return p.writePair(certName, keyName, c, priv)
}

func (p pki) writePair(certName, keyName string, c *x509.Certificate, key crypto.Signer) error {
	certPEM, err := cert.EncodeCertificates(c)
	if err != nil {
		return err
	}
	if err := cert.WriteCert(p.path(certName), certPEM); err != nil {
		return err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	return keyutil.WriteKey(p.path(keyName), keyPEM)
}

// UserKubeconfig issues a client certificate for user (with groups) signed by
// the cluster CA and writes a kubeconfig for it: how a test runs a controller
// under its own, least-privileged identity.
//
// A user's kubeconfig is issued once and then returned again: rewriting the
// certificate under a controller that runs with it makes client-go close
// its connections (certificate rotation), and a pod create whose answer is
// lost that way is created twice (seen: a second reference controller's
// start broke the first one's creates, and an index got two pods).
func (c *Cluster) UserKubeconfig(user string, groups ...string) (string, error) {
	file := "user-" + strings.NewReplacer(":", "_", "/", "_").Replace(strings.Join(append([]string{user}, groups...), "+"))
	c.issuedMu.Lock()
	defer c.issuedMu.Unlock()
	if path, ok := c.issued[file]; ok {
		return path, nil
	}
	path, err := c.clientKubeconfig(file, user, groups)
	if err != nil {
		return "", err
	}
	if c.issued == nil {
		c.issued = map[string]string{}
	}
	c.issued[file] = path
	return path, nil
}

// clientKubeconfig issues a client certificate for cn (in groups) from the
// cluster CA and writes <file>.kubeconfig (with <file>.crt and .key) for it.
func (c *Cluster) clientKubeconfig(file, cn string, groups []string) (string, error) {
	ca, signer, err := c.pki.loadCA()
	if err != nil {
		return "", err
	}
	certName, keyName := file+".crt", file+".key"
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := c.pki.issue(certName, keyName, tmpl, ca, signer); err != nil {
		return "", err
	}
	path := filepath.Join(c.stateDir, file+".kubeconfig")
	server := fmt.Sprintf("https://127.0.0.1:%d", c.ports[APIServer])
	return path, writeKubeconfig(path, c.cfg.Name, server, c.pki.path(caCert), c.pki.path(certName), c.pki.path(keyName))
}
