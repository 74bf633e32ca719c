package tokens

// CacheLen exposes the result cache size to tests.
func CacheLen(v *Validator) int {
	if v.cache == nil {
		return 0
	}
	return v.cache.Len()
}
