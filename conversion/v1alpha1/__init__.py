"""The v1alpha1 spoke: conversion of each kind's v1alpha1 objects to and from the v1beta1 hub
(``to_hub``/``from_hub`` per kind module)."""
