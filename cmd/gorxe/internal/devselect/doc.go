// Package devselect chooses the local addresses a tool's device binds to, from --bind, -d and the
// environment.
package devselect
