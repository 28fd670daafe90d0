#!/usr/bin/env bash
# A whole session against a running server, with nothing but curl and node:
# create a project, build, follow the session (svc_get_session waits for each change), open the
# preview, deploy and answer the agent's question, read the messages, queue two builds and cancel
# them, then cancel with nothing running.
#
#   TOKEN=svc_... MCP_URL=http://127.0.0.1:3333/mcp bash scripts/demo-session.sh
set -euo pipefail
URL=${MCP_URL:-http://127.0.0.1:3333/mcp}
: "${TOKEN:?set TOKEN to an API token: npx mobile-builder-mcp token create --user me}"

# call TOOL JSON-ARGUMENTS -> prints the JSON-RPC response
call() {
  curl -sS "$URL" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
}
# field PATH -> prints result.structuredContent.PATH of the response on stdin (exits 1 on an error response)
field() {
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);
    if(r.error){console.error("error:",JSON.stringify(r.error));process.exit(1)}
    const v=process.argv[1].split(".").reduce((o,k)=>o==null?o:o[k],r.result.structuredContent);
    console.log(typeof v==="object"?JSON.stringify(v):String(v))})' "$1"
}
# wait_until CONDITION -> asks svc_get_session to wait (waitSeconds) until CONDITION (a JS expression
# over `s`) is true: each call returns when the build changes step, asks or ends, so nothing polls
wait_until() {
  local wait=0 # the first look answers at once: the condition may hold already
  for _ in $(seq 1 100); do
    if call svc_get_session "{\"projectId\":\"$PROJECT\",\"waitSeconds\":$wait}" | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{const s=JSON.parse(t).result.structuredContent;if(s.wait&&s.wait.reason==="changed"&&s.activeWorkflow)console.error("   ... "+s.activeWorkflow.kind+" "+s.activeWorkflow.status+": step "+s.activeWorkflow.step.index+"/"+s.activeWorkflow.step.total+" "+(s.activeWorkflow.step.name||""));process.exit(eval(process.argv[1])?0:1)})' "$1"; then return 0; fi
    wait=30
  done
  echo "timed out waiting for: $1" >&2; return 1
}

echo "1. Create a project"
PROJECT=$(call svc_create_project '{"name":"Todo demo","description":"A todo list app","visibility":"private"}' | field id)
echo "   projectId: $PROJECT"

echo "2. Send a build instruction"
call svc_send_message "{\"projectId\":\"$PROJECT\",\"message\":\"Build a todo list with due dates\",\"kind\":\"build\"}" | field status | sed 's/^/   status: /'

echo "3. Watch the session until the build is done"
# With the expo builder's default agent (host), the build asks a code question: it is meant for
# the model of an MCP host, which answers with the app's files. This script has no model, so it
# answers "skip" (deterministic edits only). docs/builders.md "Code questions" shows a real answer.
wait_until '!s.hasActiveWorkflows || (s.pendingQuestion !== null && s.pendingQuestion.kind === "code")'
CODE_QID=$(call svc_get_session "{\"projectId\":\"$PROJECT\"}" | field pendingQuestion.questionId)
if [ "$CODE_QID" != "null" ] && [ "$CODE_QID" != "undefined" ]; then
  echo "   a code question for the host's model; answering \"skip\""
  call svc_send_message "{\"projectId\":\"$PROJECT\",\"message\":\"skip\",\"questionId\":\"$CODE_QID\"}" | field status | sed 's/^/   answered, status: /'
  wait_until '!s.hasActiveWorkflows'
fi
PREVIEW=$(call svc_get_session "{\"projectId\":\"$PROJECT\"}" | field previewUrls.0.url)
echo "   preview (open it in a browser): $PREVIEW"

echo "4. Deploy, and answer the agent's question"
call svc_send_message "{\"projectId\":\"$PROJECT\",\"message\":\"Deploy it\",\"kind\":\"deploy\"}" | field kind | sed 's/^/   kind: /'
wait_until 's.pendingQuestion !== null'
QUESTION=$(call svc_get_session "{\"projectId\":\"$PROJECT\"}" | field pendingQuestion)
echo "   question: $(echo "$QUESTION" | node -pe 'JSON.parse(require("fs").readFileSync(0)).prompt')"
QID=$(echo "$QUESTION" | node -pe 'JSON.parse(require("fs").readFileSync(0)).questionId')
call svc_send_message "{\"projectId\":\"$PROJECT\",\"message\":\"com.example.todo\",\"questionId\":\"$QID\"}" | field status | sed 's/^/   answered, status: /'
wait_until '!s.hasActiveWorkflows'
DEPLOYED=$(call svc_get_session "{\"projectId\":\"$PROJECT\"}")
# One number per deploy, shared by the platforms it published: "deploy #1: web, ios, android".
echo "   $(echo "$DEPLOYED" | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{const u=JSON.parse(t).result.structuredContent.previewUrls.filter(p=>p.kind==="deployment");const n=Math.max(...u.map(p=>p.deployNumber));console.log(`deploy #${n}: ${u.filter(p=>p.deployNumber===n).map(p=>p.platform).join(", ")}`)})')"
DEPLOYMENT=$(echo "$DEPLOYED" | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>console.log(JSON.parse(t).result.structuredContent.previewUrls.find(u=>u.kind==="deployment").url))')
echo "   deployment (open it in a browser): $DEPLOYMENT"

echo "5. Read the conversation"
call svc_get_messages "{\"projectId\":\"$PROJECT\",\"limit\":500}" \
  | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{for(const m of JSON.parse(t).result.structuredContent.messages)console.log(`   ${String(m.seq).padStart(3)} ${m.role.padEnd(6)} ${m.type.padEnd(11)} ${m.content.split("\n")[0].slice(0,90)}`)})'

echo "6. Queue two builds, then cancel both: the queued one at once, the running one by stopping it"
# Each passes kind and no questionId: a new instruction, queued even while the first build waits
# for an answer to its question (that question stays pending).
FIRST=$(call svc_send_message "{\"projectId\":\"$PROJECT\",\"message\":\"Add a dark mode\",\"kind\":\"build\"}" | field workflowId)
SECOND_REPLY=$(call svc_send_message "{\"projectId\":\"$PROJECT\",\"message\":\"Add reminders\",\"kind\":\"build\"}")
SECOND=$(echo "$SECOND_REPLY" | field workflowId)
echo "   second build queued at position $(echo "$SECOND_REPLY" | field queuePosition)"
call svc_cancel_workflow "{\"projectId\":\"$PROJECT\",\"workflowId\":\"$SECOND\"}" | field status | sed 's/^/   queued build: /'
call svc_cancel_workflow "{\"projectId\":\"$PROJECT\",\"workflowId\":\"$FIRST\"}" | field status | sed 's/^/   running build: /'
call svc_cancel_workflow "{\"projectId\":\"$PROJECT\",\"workflowId\":\"$FIRST\"}" | field cancelled | sed 's/^/   cancelling the first again, cancelled: /'

echo "7. Cancel with nothing running: the error says what was not found"
call svc_cancel_workflow "{\"projectId\":\"$PROJECT\"}" | node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{const e=JSON.parse(t).error;console.log(`   ${e.code} ${e.message}: ${JSON.stringify(e.data)}`)})'
echo "PREVIEW=$PREVIEW"
echo "DEPLOYMENT=$DEPLOYMENT"
