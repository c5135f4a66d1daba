package pricing

import (
	_ "embed"
	"sync"
)

// catalogueYAML holds list prices of widely used models, with the date
// and source they were taken from; configuration overrides them.
//
//go:embed catalogue.yaml
var catalogueYAML []byte

// Builtin returns the built-in catalogue, parsed once.
var Builtin = sync.OnceValues(func() (*Catalogue, error) { return ParseCatalogue(catalogueYAML) })
