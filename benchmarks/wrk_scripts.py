"""wrk Lua scripts for the scenarios that POST (unique bodies per request where a name must be unique)."""

from __future__ import annotations

CREATE_AGENT = r"""
local counter = 0
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  prefix = args[1] or "bench"
  wrk.headers["Content-Type"] = "application/json"
end
request = function()
  counter = counter + 1
  local body = '{"name":"' .. prefix .. '-' .. thread_id .. '-' .. counter .. '","runtime":"default"}'
  return wrk.format("POST", nil, nil, body)
end
"""

HEARTBEAT = r"""
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end
local counter = 0
function init(args)
  wrk.headers["Content-Type"] = "application/json"
end
request = function()
  counter = counter + 1
  local worker = "bench-worker-" .. thread_id .. "-" .. (counter % 16)
  local body = '{"worker_id":"' .. worker .. '","environment_name":"bench","tasks_processed":' .. counter .. '}'
  return wrk.format("POST", nil, nil, body)
end
"""

ADD_TO_TEAM = r"""
local counter = 0
function init(args)
  paths = args
end
request = function()
  counter = counter + 1
  return wrk.format("POST", paths[(counter % #paths) + 1], nil, nil)
end
"""
