package strictyaml

import "github.com/sixpin/sixpin/internal/fielderr"

// FieldError is one problem with a document, named by its field path
// ("pins.mix.classes[1].weight": dots between keys, [i] for sequence
// items) and positioned at file:line:col (see fielderr.Error).
type FieldError = fielderr.Error

// ErrorList is every problem found in a document, in file order (see
// fielderr.List).
type ErrorList = fielderr.List
