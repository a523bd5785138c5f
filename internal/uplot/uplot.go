// Package uplot embeds uPlot, the charting library of sixpin's HTML
// pages, vendored from npm at a pinned version with its licence: the pages
// stay one file each, fully offline (nothing is fetched when they open).
//
// uPlot (MIT, Leon Sorokin) was chosen over growing the hand-written SVG
// engine for the charts people question — hover with exact values, zoom
// and pan over thousands of points on a canvas — and over Chart.js,
// ECharts or Plotly for its size: 51 KB of script and 2 KB of style,
// against 200 KB to 3.5 MB. To update it, run `make vendor-uplot
// UPLOT=x.y.z` and put the new version and checksums below.
package uplot

import _ "embed"

// Version is the vendored release; Tarball and TarballSHA256 say where
// it came from.
const (
	Version       = "1.6.32"
	Tarball       = "https://registry.npmjs.org/uplot/-/uplot-1.6.32.tgz"
	TarballSHA256 = "4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d"
)

// The vendored files' checksums, checked by the package's test: what is
// embedded is what the release holds.
const (
	scriptSHA256 = "19c8d4c6ad88929a79f4ae49d6f7161566dfd0ba3d15cc495e974f787eb78f1f"
	styleSHA256  = "df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04"
)

// Script is dist/uPlot.iife.min.js: it defines the global uPlot.
//
//go:embed uPlot.iife.min.js
var Script string

// Style is dist/uPlot.min.css.
//
//go:embed uPlot.min.css
var Style string

// License is uPlot's licence, which a page carrying Script must keep.
//
//go:embed LICENSE
var License string
