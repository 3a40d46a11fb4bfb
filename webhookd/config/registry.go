package config

// validate reads the registry's bearer token.
func (c *RegistryConfig) validate(add func(field, format string, args ...any)) {
	switch s, err := ReadSecret(c.TokenFile); {
	case c.TokenFile == "":
		add("registry.tokenFile", "required when registry is set")
	case err != nil:
		add("registry.tokenFile", "%v", err)
	case len(s.Bytes()) < minSecretLen:
		add("registry.tokenFile", "%s holds %d bytes; use at least %d (e.g. openssl rand -hex 32)", c.TokenFile, len(s.Bytes()), minSecretLen)
	default:
		c.Token = s
	}
}
