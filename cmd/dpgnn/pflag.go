package main

import "github.com/spf13/pflag"

type (
	pflagSet  = pflag.FlagSet
	pflagFlag = pflag.Flag
)

func newPflagSet() *pflag.FlagSet { return pflag.NewFlagSet("method", pflag.ContinueOnError) }
