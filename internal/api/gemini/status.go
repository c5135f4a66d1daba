package gemini

// Status returns the HTTP status Google's error envelope carries for an
// HTTP status, and the canonical status name (google.rpc.Code) that goes
// with it, as Google maps them: a status Google does not use becomes the
// nearest it does (an overloaded upstream's 529 is 503 UNAVAILABLE; any
// other client error 400, any other failure 500). Every error a Gemini
// client sees, the gateway's own and a translated upstream's, takes its
// status name from here.
func Status(code int) (int, string) {
	if name, ok := statusNames[code]; ok {
		return code, name
	}
	switch {
	case code == 529:
		return 503, statusNames[503]
	case code >= 400 && code < 500:
		return 400, statusNames[400]
	}
	return 500, statusNames[500]
}

// statusNames are google.rpc.Code's HTTP mapping, plus the statuses the
// gateway answers with that it has none for. 405 is UNIMPLEMENTED: the
// method named by the verb and path does not exist, which is what Google's
// HTTP-to-gRPC transcoding (and grpc-gateway) say for a wrong verb; 413 is
// INVALID_ARGUMENT, what Google answers a payload over its limit with.
// 502 is UNAVAILABLE, as 503: the upstream could not answer, and the
// clients retry both.
var statusNames = map[int]string{
	400: "INVALID_ARGUMENT",
	401: "UNAUTHENTICATED",
	403: "PERMISSION_DENIED",
	404: "NOT_FOUND",
	405: "UNIMPLEMENTED",
	409: "ABORTED",
	413: "INVALID_ARGUMENT",
	429: "RESOURCE_EXHAUSTED",
	499: "CANCELLED",
	500: "INTERNAL",
	501: "UNIMPLEMENTED",
	502: "UNAVAILABLE",
	503: "UNAVAILABLE",
	504: "DEADLINE_EXCEEDED",
}
