package admissionauth

import (
	"strconv"
	"strings"
)

// DefaultServicePort is the port of a webhook's Service when its
// clientConfig.service gives none.
const DefaultServicePort = 443

// ServiceAudience is the audience of tokens for a webhook registered with
// clientConfig.service, as kube-apiserver derives it:
// https://NAME.NAMESPACE.svc:PORT/PATH, the port 443 when zero, the path "/"
// when empty and given a leading "/" when it lacks one. A webhook
// registered with clientConfig.url has that URL, verbatim, as its audience.
func ServiceAudience(namespace, name string, port int32, path string) string {
	if port == 0 {
		port = DefaultServicePort
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return "https://" + name + "." + namespace + ".svc:" + strconv.Itoa(int(port)) + path
}
