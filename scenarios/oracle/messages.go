package oracle

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Messages (issue #56): the words a user reads on the Job — each
// condition's message, each event's — compared, with what two runs name
// differently replaced by placeholders: the pods' names, the namespace, the
// Job's UID. Numbers stay: an exit code, a rule's index, a count are what
// the message says. A message is no promise of the API, but a user's
// alerts and runbooks match them, and upstream keeps them stable across
// releases; a controller that words them otherwise differs here, said.

// combined is the prefix client-go's event correlator gives an event that
// stands for ten or more alike (record.EventAggregatorByReasonMessageFunc):
// which events it combines is timing, what they said is not.
const combined = "(combined from similar events): "

// messages gathers the distinct messages of o's run by what bears them:
// "condition <type>=<status>/<reason>" and "event <type>/<reason>".
type messages map[string][]string

func (m messages) add(key, msg string) {
	if !slices.Contains(m[key], msg) {
		m[key] = append(m[key], msg)
	}
}

// conditions adds the messages of job's conditions.
func (m messages) conditions(job *batchv1.Job) {
	for _, c := range job.Status.Conditions {
		m.add("condition "+condition(c), c.Message)
	}
}

// event adds ev's message.
func (m messages) event(ev *corev1.Event) {
	m.add("event "+ev.Type+"/"+ev.Reason, strings.TrimPrefix(ev.Message, combined))
}

// joined is m canonical, the names replaced: each bearer's distinct
// messages sorted, joined by " | ".
func (m messages) joined(names *placeholders) map[string]string {
	out := map[string]string{}
	for k, ms := range m {
		var got []string
		for _, msg := range ms {
			if msg = names.replace(msg); !slices.Contains(got, msg) {
				got = append(got, msg)
			}
		}
		slices.Sort(got)
		out[k] = strings.Join(got, " | ")
	}
	return out
}

// placeholders replaces the names a run gave at random: those it saw (the
// pods, the namespace, the Job's UID) and any name generated from the
// Job's pods' generateName (the Job's name, an index for an Indexed Job,
// and apiserver's five random characters: names.SimpleNameGenerator) —
// a refused creation names a pod that never existed (FailedCreate's
// 'pods "job-7w5vl" is forbidden', seen differ between the built-in's
// own two runs).
type placeholders struct {
	names     map[string]string // a name seen → its placeholder
	generated *regexp.Regexp
	replacer  *strings.Replacer // of names, made once they are all seen
}

// generatedFrom makes p replace the names generated for job's pods.
func (p *placeholders) generatedFrom(job string) {
	p.generated = regexp.MustCompile(`\b` + regexp.QuoteMeta(job) + `-(?:[0-9]+-)?[bcdfghjklmnpqrstvwxz2456789]{5}\b`)
}

func (p *placeholders) name(from, to string) {
	if from == "" {
		return
	}
	if p.names == nil {
		p.names = map[string]string{}
	}
	p.names[from] = to
}

// replace puts the placeholders into s, longest name first (a pod's name
// holds the Job's).
func (p *placeholders) replace(s string) string {
	if p.replacer == nil {
		from := slices.SortedFunc(maps.Keys(p.names), func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
		var pairs []string
		for _, f := range from {
			pairs = append(pairs, f, p.names[f])
		}
		p.replacer = strings.NewReplacer(pairs...)
	}
	return p.generic(p.replacer.Replace(s))
}

// apiUser is the identity an apiserver's refusal names ("pods is
// forbidden: User \"…\" cannot create…"): each controller runs as its own
// (a drill's restarted apiserver refused both before its RBAC was read).
var apiUser = regexp.MustCompile(`\bUser "[^"]*"`)

// RefusalPolicyPrefix begins the names of the admission policy and binding
// that refuse a controller's pod changes in one run's namespace (the
// runner's refusePodChanges act), which its refusals name.
const RefusalPolicyPrefix = "jobconform-refuse-pod-changes-"

var refusalPolicy = regexp.MustCompile(regexp.QuoteMeta(RefusalPolicyPrefix) + `[a-z0-9-]+`)

// generic replaces the generated names no run saw, and the identity of
// the controller an apiserver's refusal names, and the policy that refused.
func (p *placeholders) generic(s string) string {
	s = apiUser.ReplaceAllString(s, `User "<controller>"`)
	s = refusalPolicy.ReplaceAllString(s, RefusalPolicyPrefix+"<namespace>")
	if p.generated == nil {
		return s
	}
	return p.generated.ReplaceAllString(s, "<pod>")
}
