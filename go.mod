module github.com/tollgate/tollgate

go 1.26

require (
	github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3
	github.com/tidwall/gjson v1.20.0
	go.yaml.in/yaml/v3 v3.0.5
)

require (
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
)
