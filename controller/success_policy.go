// successPolicy (Indexed Jobs): when the succeeded indexes satisfy a rule.

package controller

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
)

// matchSuccessPolicy: the first rule the succeeded indexes satisfy (Indexed Jobs only).
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int, succeeded indexSet) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		if rule.SucceededIndexes != nil {
			required := parseIndexes(*rule.SucceededIndexes, completions)
			if len(required) == 0 {
				continue
			}
			have := 0
			for _, ix := range required {
				if succeeded.has(ix) {
					have++
				}
			}
			if have == len(required) || (rule.SucceededCount != nil && have >= int(*rule.SucceededCount)) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		} else if rule.SucceededCount != nil && len(succeeded) >= int(*rule.SucceededCount) {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}
