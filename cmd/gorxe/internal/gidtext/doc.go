// Package gidtext prints and encodes GIDs exactly as the C tools do: inet_ntop's text form and the
// pingpong tools' 32-hex-digit wire form.
package gidtext
