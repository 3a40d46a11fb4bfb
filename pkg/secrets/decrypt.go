package secrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/logging"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
)

// Sentinel errors of Open; callers branch with errors.Is.
var (
	// ErrNoIdentity: none of the host's identities is a recipient of the
	// document.
	ErrNoIdentity = errors.New("no identity of this host can open it")
	// ErrMAC: the document was changed after it was encrypted.
	ErrMAC = errors.New("MAC check failed: the document was changed after it was encrypted")
	// ErrShape: the document is not a flat SOPS map of key → string
	// encrypted for age.
	ErrShape = errors.New("not a flat SOPS document of string values encrypted for age")
)

var keyRe = regexp.MustCompile(`^[a-z0-9-]+$`)

func init() {
	// The SOPS library logs through its own loggers (and may print at
	// warning level). syslet reports every outcome itself.
	logging.SetLevel(logrus.PanicLevel)
	for _, l := range logging.Loggers {
		l.SetOutput(io.Discard)
	}
}

// RecipientError is ErrNoIdentity with what a person needs to fix it: the
// recipients the document is encrypted for and the ones this host holds.
type RecipientError struct {
	For  []string // age recipients in the document's metadata
	Have []string // recipients of the host's identities
}

func (e *RecipientError) Error() string {
	have := "none (no SSH host key, cache or age identity file)"
	if len(e.Have) > 0 {
		have = strings.Join(e.Have, ", ")
	}
	return fmt.Sprintf("%v: it is encrypted for %s; this host holds %s", ErrNoIdentity, strings.Join(e.For, ", "), have)
}

func (e *RecipientError) Unwrap() error { return ErrNoIdentity }

// Open decrypts a whole SOPS document, YAML or JSON, with the given
// identities and returns its top-level keys and values. Key names are
// checked against [a-z0-9-]+ before anything is decrypted; the data key is
// recovered through age only; the MAC is verified; every value must be a
// string. No error from Open contains a value.
func Open(doc []byte, ids []Identity) (map[string][]byte, error) {
	var store sops.Store = sopsyaml.NewStore(&config.YAMLStoreConfig{})
	if t := bytes.TrimSpace(doc); len(t) > 0 && t[0] == '{' {
		store = sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	tree, err := store.LoadEncryptedFile(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrShape, err)
	}
	if len(tree.Branches) != 1 {
		return nil, fmt.Errorf("%w: it holds %d documents, want one", ErrShape, len(tree.Branches))
	}
	for _, it := range tree.Branches[0] {
		if _, ok := it.Key.(sops.Comment); ok {
			continue
		}
		k, ok := it.Key.(string)
		if !ok || !keyRe.MatchString(k) {
			return nil, fmt.Errorf("%w: key %q must match [a-z0-9-]+", ErrShape, fmt.Sprint(it.Key))
		}
		if _, ok := it.Value.(string); !ok {
			return nil, fmt.Errorf("%w: key %q must hold a single string, not a nested map or list", ErrShape, k)
		}
	}
	var recipients []string
	for _, g := range tree.Metadata.KeyGroups {
		for _, mk := range g {
			if a, ok := mk.(*sopsage.MasterKey); ok {
				recipients = append(recipients, a.Recipient)
			}
		}
	}
	if len(recipients) == 0 {
		return nil, fmt.Errorf("%w: it has no age recipients", ErrShape)
	}
	var ageIDs []age.Identity
	var have []string
	for _, id := range ids {
		ageIDs = append(ageIDs, id.Identity)
		if id.Recipient != "" {
			have = append(have, id.Recipient)
		}
	}
	svc := &ageService{ids: ageIDs}
	dataKey, err := tree.Metadata.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{svc}, nil)
	if err != nil {
		if svc.failed != nil {
			return nil, fmt.Errorf("recovering the data key with age: %w", svc.failed)
		}
		return nil, &RecipientError{For: recipients, Have: have}
	}
	defer clear(dataKey)
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(dataKey, cipher)
	if err != nil {
		// The library's message can quote a decrypted value (a string
		// that fails to parse as the type its envelope claims), so it is
		// not passed on.
		return nil, fmt.Errorf("%w (a value does not decrypt or does not match its declared type)", ErrMAC)
	}
	want, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil || want != mac {
		return nil, ErrMAC
	}
	out := map[string][]byte{}
	for _, it := range tree.Branches[0] {
		k, ok := it.Key.(string)
		if !ok {
			continue // a comment
		}
		v, ok := it.Value.(string)
		if !ok {
			for _, b := range out {
				clear(b)
			}
			return nil, fmt.Errorf("%w: key %q holds a %s, not a string (quote it before encrypting)", ErrShape, k, typeName(it.Value))
		}
		out[k] = []byte(v)
	}
	return out, nil
}

func typeName(v any) string {
	switch v.(type) {
	case int:
		return "number"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []byte:
		return "binary value"
	}
	return fmt.Sprintf("%T", v)
}

// ageService recovers SOPS data keys with the host's age identities only.
// It stands in for SOPS's local key service, which would look for
// identities in the environment and the home directory and would try
// every cloud KMS the document names.
type ageService struct {
	ids []age.Identity
	// failed is the first error other than "no identity matched": a
	// matching identity met a damaged stanza.
	failed error
}

var errNotAge = errors.New("only age recipients are used by syslet")

func (s *ageService) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("syslet never encrypts")
}

func (s *ageService) Decrypt(_ context.Context, in *keyservice.DecryptRequest, _ ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	if in.GetKey().GetAgeKey() == nil {
		return nil, errNotAge
	}
	if len(s.ids) == 0 {
		return nil, ErrNoIdentity
	}
	r, err := age.Decrypt(armor.NewReader(bytes.NewReader(in.GetCiphertext())), s.ids...)
	if err == nil {
		var key []byte
		if key, err = io.ReadAll(r); err == nil {
			return &keyservice.DecryptResponse{Plaintext: key}, nil
		}
	}
	var nomatch *age.NoIdentityMatchError
	if !errors.As(err, &nomatch) && s.failed == nil {
		s.failed = err
	}
	return nil, err
}
