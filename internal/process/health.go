package process

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// AwaitHealthy polls url (a health endpoint the process serves on this
// machine) until it answers 200 OK, the process exits, or timeout passes;
// on failure the process is killed and the error says why.
func (p *Process) AwaitHealthy(ctx context.Context, url string, timeout time.Duration) error {
	// No proxy: the address is ours, on this machine.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.Exited():
			return false, fmt.Errorf("%s", p.DescribeExit())
		default:
		}
		resp, err := client.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		_ = p.Kill()
		return fmt.Errorf("%s not healthy at %s (log %s): %w", p.Name, url, p.LogPath, err)
	}
	return nil
}
