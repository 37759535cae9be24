package kubeletnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Every kubelet on a machine serves device-plugin registration on one fixed
// path, whatever its --root-dir (k8s.io/kubelet's deviceplugin/v1beta1
// KubeletSocket, the same in every release from 1.31): as its container
// manager starts it removes the sockets there and listens anew. Two kubelets
// doing that at once fail one with "bind: address already in use", and the
// kubelet exits ("Failed to start ContainerManager"), relying on a
// babysitter to start it again; its node never became Ready. So kubelets
// start one at a time, across processes too, each until that socket is its
// own.
const devicePluginSocket = "/var/lib/kubelet/device-plugins/kubelet.sock"

// lockDevicePlugins takes the machine-wide turn to start a kubelet.
func lockDevicePlugins(ctx context.Context) (unlock func(), err error) {
	dir := filepath.Dir(devicePluginSocket)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("kubelet device-plugin directory: %w", err)
	}
	// A dot file: the kubelets' clean-up removes only sockets.
	l := flock.New(filepath.Join(dir, ".jobconform-start.lock"), flock.SetPermissions(0o600))
	if _, err := l.TryLockContext(ctx, 50*time.Millisecond); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("kubelet start lock: %w", err)
	}
	return func() { _ = l.Close() }, nil
}

// socketID tells one device-plugin socket from the one before it: a kubelet
// removes the old and listens anew, so its inode or its time changes (either
// alone may repeat: inode numbers are reused, the kernel's clock is coarse).
type socketID struct {
	ino   uint64
	mtime time.Time
}

// currentSocket is the socket on the device-plugin path now, if any.
func currentSocket() (socketID, bool) {
	st, err := os.Stat(devicePluginSocket)
	if err != nil || st.Mode()&os.ModeSocket == 0 {
		return socketID{}, false
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if sys == nil {
		return socketID{}, false
	}
	return socketID{ino: sys.Ino, mtime: st.ModTime()}, true
}

// waitDevicePluginSocket waits until the kubelet just started listens on the
// device-plugin socket (one other than before, which it held before it
// started), or exits.
func (n *Node) waitDevicePluginSocket(ctx context.Context, before socketID, hadBefore bool) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		if !n.kubelet.Running() {
			return false, fmt.Errorf("kubelet exited before its container manager started: %s", n.kubelet.DescribeExit())
		}
		now, ok := currentSocket()
		return ok && (!hadBefore || now != before), nil
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("kubelet did not listen on %s within 60s (its container manager did not start); log %s", devicePluginSocket, n.kubelet.LogPath)
	}
	return err
}
