package config_test

// The provider types are registered by their implementations; the
// configuration tests read configurations that use them.
import _ "github.com/tollgate/tollgate/internal/provider"
