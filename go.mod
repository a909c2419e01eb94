module github.com/mcpdiff/mcpdiff

go 1.25.5

require (
	github.com/bluekeyes/go-gitdiff v0.9.0
	github.com/coder/websocket v1.8.15
	github.com/fsnotify/fsnotify v1.9.0
	github.com/gofrs/flock v0.13.1
	github.com/mark3labs/mcp-go v1.2.1
	github.com/neovim/go-client v1.2.1
	golang.org/x/sys v0.47.0
	golang.org/x/text v0.38.0
)

require (
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
)
