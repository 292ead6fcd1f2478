//go:build linux

package main

func main() {}
