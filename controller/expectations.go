package controller

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// expectationsTTL bounds how long a sync waits for the cache to show its own
// creations and deletions; past it the cache is trusted again (as upstream).
const expectationsTTL = 5 * time.Minute

// expectations counts the pod creations and deletions a Job's last sync made
// that the informer cache has not shown yet. While any is outstanding, a sync
// must not create or delete more: its view of the pods would be stale.
type expectations struct {
	mu sync.Mutex
	m  map[string]*expected
}

type expected struct {
	adds    int
	deletes sets.Set[types.UID]
	at      time.Time
}

func newExpectations() *expectations { return &expectations{m: map[string]*expected{}} }

func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	if (x.adds <= 0 && x.deletes.Len() == 0) || time.Since(x.at) > expectationsTTL {
		delete(e.m, key)
		return true
	}
	return false
}

// activeNow corrects the number of active pods the cache shows with what it
// has not shown yet: creations of ours are active pods, deletions of ours
// are not. A created pod deleted before the cache ever showed it counts until
// expectationsTTL, as it holds back the controller's next creations meanwhile.
func (e *expectations) activeNow(key string, active []*corev1.Pod) int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := int32(len(active))
	x, ok := e.m[key]
	if !ok {
		return n
	}
	n += int32(max(x.adds, 0))
	for _, p := range active {
		if x.deletes.Has(p.UID) {
			n--
		}
	}
	return n
}

// notDeleting is active without the pods whose deletion by us the cache has
// not shown yet: the ones a sync may still delete, and count as ready.
func (e *expectations) notDeleting(key string, active []*corev1.Pod) []*corev1.Pod {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok || x.deletes.Len() == 0 {
		return active
	}
	out := make([]*corev1.Pod, 0, len(active))
	for _, p := range active {
		if !x.deletes.Has(p.UID) {
			out = append(out, p)
		}
	}
	return out
}

func (e *expectations) get(key string) *expected {
	x, ok := e.m[key]
	if !ok {
		x = &expected{deletes: sets.New[types.UID]()}
		e.m[key] = x
	}
	x.at = time.Now()
	return x
}

func (e *expectations) expectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).adds += n
}

func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok && x.adds > 0 {
		x.adds--
	}
}

func (e *expectations) expectDeletions(key string, uids []types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).deletes.Insert(uids...)
}

func (e *expectations) deletionObserved(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		x.deletes.Delete(uid)
	}
}

func (e *expectations) delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// uidExpectations remembers pods whose tracking finalizer this controller is
// removing, until the cache shows it gone: such pods must not be counted again.
type uidExpectations struct {
	mu sync.Mutex
	m  map[string]sets.Set[types.UID]
}

func newUIDExpectations() *uidExpectations {
	return &uidExpectations{m: map[string]sets.Set[types.UID]{}}
}

func (u *uidExpectations) expect(key string, uids ...types.UID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m[key] == nil {
		u.m[key] = sets.New[types.UID]()
	}
	u.m[key].Insert(uids...)
}

func (u *uidExpectations) observed(key string, uid types.UID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s := u.m[key]; s != nil {
		s.Delete(uid)
		if s.Len() == 0 {
			delete(u.m, key)
		}
	}
}

func (u *uidExpectations) get(key string) sets.Set[types.UID] {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.m[key].Clone()
}

func (u *uidExpectations) delete(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.m, key)
}
