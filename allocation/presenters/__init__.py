"""Presenters: engine ClusterState -> the data the console's pages and fragments show.

They read engine objects and never write anything; templates only format what they return.
``live`` knows every live page, its fragments and how to render them for a WebSocket.
"""
