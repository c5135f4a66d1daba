package store

// InferenceEndpoints are the endpoints whose records are usage.
var InferenceEndpoints = inferenceEndpoints
