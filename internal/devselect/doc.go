// Package devselect chooses the local addresses a device binds to, from --bind, -d and the
// environment.
package devselect
