#!/bin/sh
# Regenerates the test PKI of tests/http_client_config.rs (a CA, a server certificate for
# localhost / 127.0.0.1 and a client certificate, all ECDSA P-256, valid for 100 years). The
# CA key is not kept: rerun the whole script to change anything.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/ca.key"
openssl req -x509 -new -key "$tmp/ca.key" -subj "/CN=ferromcp test CA" -days 36500 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out ca.pem
sign() { # name subject extensions
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"
  openssl req -new -key "$1.key" -subj "$2" -out "$tmp/$1.csr"
  printf '%s\n' "$3" > "$tmp/$1.ext"
  openssl x509 -req -in "$tmp/$1.csr" -CA ca.pem -CAkey "$tmp/ca.key" -CAcreateserial \
    -CAserial "$tmp/ca.srl" -days 36500 -extfile "$tmp/$1.ext" -out "$1.pem"
}
sign server "/CN=localhost" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1"
sign client "/CN=ferromcp test client" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
