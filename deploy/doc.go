// Package deploy holds Surveyor's deployment files — Dockerfile, compose.yaml
// and the kustomization under k8s/ — and the tests that keep them valid. It
// is a Go module of its own so that the Kubernetes, kustomize and compose
// libraries those tests need stay out of the main module.
package deploy
