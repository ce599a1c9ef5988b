package fingerprint

// Uses reports whether any pattern of the engine reads the evidence field
// named as in the Wappalyzer format ("robots", "dns", "certIssuer", ...).
// Callers gather costly evidence, such as a robots.txt request, only when
// some fingerprint can match it.
func (e *Engine) Uses(field string) bool {
	for k, name := range kindNames {
		if name == field {
			return len(e.kinds[k].keys) > 0
		}
	}
	return false
}
