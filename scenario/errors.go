package scenario

import "github.com/sixpin/sixpin/internal/strictyaml"

// FieldError is one problem with a scenario, named by its field path
// ("pins.mix.classes[1].weight") and positioned in its file.
type FieldError = strictyaml.FieldError

// ErrorList is every problem found in a scenario, in file order. Load,
// Parse and Validate return one (never an empty one) when anything is wrong;
// errors.As finds it, and each *FieldError in it.
type ErrorList = strictyaml.ErrorList
