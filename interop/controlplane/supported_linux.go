package controlplane

// supported reports that Start works on this operating system.
func supported() error { return nil }
