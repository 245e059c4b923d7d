#!/bin/bash
echo alpha > a.txt
echo beta > b.txt
