-- Argo CD health check for StaticExportRelease and AgentJob (staticexport.dev). Argo CD runs it with
-- the live object as `obj`. The operator writes the conditions kstatus reads: Ready, Reconciling
-- (present only while work is under way), Stalled (present only while the user must act), and
-- status.observedGeneration (-1 until the operator first acted on the object).
local hs = { status = "Progressing", message = "Waiting for the operator" }

if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: no exports, renewals or rollouts"
  return hs
end
if obj.status == nil then
  return hs
end

local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.message = "Waiting for the operator to act on generation " .. generation
  return hs
end

-- "Reason: message", whatever of the two is there.
local function explain(c)
  if c.reason == nil or c.reason == "" then
    return c.message or ""
  end
  return c.reason .. ": " .. (c.message or "")
end

local ready, reconciling, stalled
for _, c in ipairs(obj.status.conditions or {}) do
  if c.type == "Ready" then
    ready = c
  elseif c.type == "Reconciling" then
    reconciling = c
  elseif c.type == "Stalled" then
    stalled = c
  end
end

if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = explain(stalled)
elseif reconciling ~= nil and reconciling.status == "True" then
  hs.message = reconciling.message or ""
elseif ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or ""
elseif ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = explain(ready)
end
return hs
