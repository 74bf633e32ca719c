package credspec

import "k8s.io/apimachinery/pkg/runtime"

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *CredentialSpec) DeepCopyInto(out *CredentialSpec) {
	*out = *in
	if in.ActiveDirectoryConfig != nil {
		out.ActiveDirectoryConfig = in.ActiveDirectoryConfig.DeepCopy()
	}
	if in.CMSPlugins != nil {
		out.CMSPlugins = append([]string(nil), in.CMSPlugins...)
	}
	if in.DomainJoinConfig != nil {
		c := *in.DomainJoinConfig
		out.DomainJoinConfig = &c
	}
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *CredentialSpec) DeepCopy() *CredentialSpec {
	if in == nil {
		return nil
	}
	out := new(CredentialSpec)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *ActiveDirectoryConfig) DeepCopyInto(out *ActiveDirectoryConfig) {
	*out = *in
	if in.GroupManagedServiceAccounts != nil {
		out.GroupManagedServiceAccounts = append([]GroupManagedServiceAccount(nil), in.GroupManagedServiceAccounts...)
	}
	if in.HostAccountConfig != nil {
		c := *in.HostAccountConfig
		out.HostAccountConfig = &c
	}
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *ActiveDirectoryConfig) DeepCopy() *ActiveDirectoryConfig {
	if in == nil {
		return nil
	}
	out := new(ActiveDirectoryConfig)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *GMSACredentialSpec) DeepCopyInto(out *GMSACredentialSpec) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.CredSpec = in.CredSpec.DeepCopy()
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *GMSACredentialSpec) DeepCopy() *GMSACredentialSpec {
	if in == nil {
		return nil
	}
	out := new(GMSACredentialSpec)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *GMSACredentialSpec) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *GMSACredentialSpecList) DeepCopyInto(out *GMSACredentialSpecList) {
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]GMSACredentialSpec, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *GMSACredentialSpecList) DeepCopy() *GMSACredentialSpecList {
	if in == nil {
		return nil
	}
	out := new(GMSACredentialSpecList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *GMSACredentialSpecList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
