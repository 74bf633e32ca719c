package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/oidc"
)

// writeRing writes the ring file in place, in the format it was read in
// (like, its bytes when the run read it), with the other outputs (the next
// key's files). A ring file changed since the run read it (another run)
// is refused. A symbolic link is written through, to its target; the
// file keeps its mode.
func (a *app) writeRing(path string, file *extsigner.RingFile, like []byte, others ...output) error {
	data, err := ringFileBytes(file, like)
	if err != nil {
		return err
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fail(err, "check --ring", "resolving %s", path)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return fail(err, "check --ring", "checking %s", path)
	}
	now, err := readInput(path, nil, extsigner.MaxRingFileBytes)
	if err != nil || !bytes.Equal(now, like) {
		return fail(err, "run one ksa issuer rotate at a time (a CronJob with concurrencyPolicy: Forbid), then run it again",
			"%s changed while this run read the store: another run or an edit wrote it (nothing was written)", path)
	}
	err = a.writeOutputs(append(others, output{path: target, data: data, perm: fi.Mode().Perm(), flag: "--ring", replace: replaceForced})...)
	var e *Error
	if errors.As(err, &e) && e.Fix == "choose a writable path for --ring" {
		e.Fix = "give --ring a file the run may write: a ring file mounted from a ConfigMap is read-only; rotate a writable copy and update the ConfigMap from it"
	}
	return err
}

// ringFileBytes encodes a ring file as JSON, or as YAML when like, the
// file it replaces, is not JSON.
func ringFileBytes(file *extsigner.RingFile, like []byte) ([]byte, error) {
	out := file.AppendJSON(nil)
	if isJSON(like) {
		return out, nil
	}
	y, err := yaml.JSONToYAML(out)
	if err != nil {
		return nil, fail(err, bugFix, "writing the ring file as YAML")
	}
	return y, nil
}

// publishRing publishes the key set the ring publishes now to the store,
// through the publication's own order: key set first, discovery last.
func (f *rotateFlags) publishRing(ctx context.Context, a *app, st *rotationState, now time.Time, res *scheduledRotation) error {
	if f.dryRun {
		return nil
	}
	// The ring the file makes now: the keys it publishes after the change.
	if err := st.open(ctx, a, f.ring, now); err != nil {
		return err
	}
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: st.docs.issuer, JWKSURI: st.docs.jwksURI}, st.ring.KeySet().Keys)
	if err != nil {
		return fail(err, "check the keys of the ring file", "rendering the key set of %s", f.ring)
	}
	st.docs.keySet = docs.JWKS
	if st.docs.azwi != nil {
		st.docs.azwi = docs.JWKS
	}
	objs, err := st.docs.objects(st.loc, "")
	if err != nil {
		return err
	}
	res.Withdrawn = withdrawnKeys(ctx, st.store, objs[0].Name, docs.JWKS)
	written := make([]publishedObject, len(objs))
	for i, o := range objs {
		written[i] = publishedObject{Name: o.Name}
	}
	return putObjects(ctx, st.store, objs, written, "run the same ksa issuer rotate again: it publishes what the ring file publishes", st.versions)
}
