#!/bin/sh
# Connects Argo CD's notifications controller to argo-why without clobbering anything already configured:
#   1. adds the key argo-why-token to argocd-notifications-secret (merge patch: other keys stay);
#   2. adds the webhook service, the trigger and the template to argocd-notifications-cm (merge patch: other keys,
#      `subscriptions` and `context` included, stay);
#   3. appends one subscription to the existing `subscriptions` (unless one for argo-why is already there).
# Safe to run again. Needs kubectl (and its context on the Argo CD cluster) and a POSIX shell.
#
#   WEBHOOK_TOKEN=... [ARGOCD_NAMESPACE=argocd] [ARGO_WHY_URL=http://argo-why.argo-why.svc:8080] \
#   [SUBSCRIBE=all|none] deploy/argocd-notifications/install.sh
set -eu

here=$(cd "$(dirname "$0")" && pwd)
ns=${ARGOCD_NAMESPACE:-argocd}
url=${ARGO_WHY_URL:-http://argo-why.argo-why.svc:8080}
subscribe=${SUBSCRIBE:-all}
: "${WEBHOOK_TOKEN:?set WEBHOOK_TOKEN to the value of WEBHOOK_TOKEN in the bot's Secret}"
kubectl=${KUBECTL:-kubectl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case "$WEBHOOK_TOKEN" in
  *[!A-Za-z0-9._~+/=-]*) echo "WEBHOOK_TOKEN: use letters, digits and ._~+/=- only (e.g. openssl rand -hex 32)" >&2; exit 2 ;;
esac
case "$url" in
  http://*|https://*) ;;
  *) echo "ARGO_WHY_URL must start with http:// or https://" >&2; exit 2 ;;
esac

# 1. the token, next to whatever the Secret already holds
printf 'stringData:\n  argo-why-token: "%s"\n' "$WEBHOOK_TOKEN" > "$tmp/secret.yaml"
$kubectl -n "$ns" patch secret argocd-notifications-secret --type merge --patch-file "$tmp/secret.yaml" >/dev/null

# 2. service, trigger, template (the service URL is the only line that changes)
sed "s#url: http://argo-why.argo-why.svc:8080#url: $url#" "$here/argocd-notifications-cm.patch.yaml" > "$tmp/cm.yaml"
$kubectl -n "$ns" patch configmap argocd-notifications-cm --type merge --patch-file "$tmp/cm.yaml" >/dev/null
echo "argocd-notifications-cm: service.webhook.argo-why ($url), trigger.on-drift-after-sync, template.argo-why-drift"

# 3. one subscription, appended to the existing block list
if [ "$subscribe" = none ]; then
  echo "subscriptions: left alone (SUBSCRIBE=none); annotate Applications or AppProjects with"
  echo "  notifications.argoproj.io/subscribe.on-drift-after-sync.argo-why: \"\""
else
  current=$($kubectl -n "$ns" get configmap argocd-notifications-cm -o 'jsonpath={.data.subscriptions}')
  if printf '%s\n' "$current" | grep -q 'on-drift-after-sync'; then
    echo "subscriptions: argo-why is already subscribed"
  else
    first=$(printf '%s\n' "$current" | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$' | head -n 1 || true)
    case "$first" in
      ""|-*) ;;
      *) echo "subscriptions is not a YAML block list (it starts with: $first); add this entry by hand:" >&2
         grep -v '^#' "$here/subscription.yaml" >&2
         exit 3 ;;
    esac
    {
      printf 'data:\n  subscriptions: |\n'
      [ -n "$current" ] && printf '%s\n' "$current" | sed 's/^/    /'
      grep -v '^#' "$here/subscription.yaml" | sed 's/^/    /'
    } > "$tmp/subscriptions.yaml"
    $kubectl -n "$ns" patch configmap argocd-notifications-cm --type merge --patch-file "$tmp/subscriptions.yaml" >/dev/null
    echo "subscriptions: appended {recipients: [argo-why], triggers: [on-drift-after-sync]}"
  fi
fi

# Links in Slack come from the bot's ARGOCD_PUBLIC_URL (the chart's argocd.publicUrl), not from context.argocdUrl.
echo "verify: argocd admin notifications template notify argo-why-drift <app> -n $ns --recipient argo-why"
